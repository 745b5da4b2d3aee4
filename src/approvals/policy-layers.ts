import { type ApprovalRule, standingExpiry, type ToolPolicy } from './approval.js';
import type { FileRule } from './policy-file-schema.js';
import { previewLayer, riskLayer } from './policy-judgement.js';

/**
 * A tool's policy with a file's rule fields laid over it (`defaults` over the built-in policy, a tool's entry
 * over `defaults`, a conditional rule over its tool): each field given replaces the one below; optional fields
 * a rule never set stay out of it, so stored rules read as they always did.
 */
export function layer(base: ToolPolicy, over: FileRule): ToolPolicy {
  const rule: ApprovalRule = {
    approvers: over.approvers ?? base.rule.approvers,
    allowSelfApproval: over.allowSelfApproval ?? base.rule.allowSelfApproval,
    quorum: over.quorum ?? base.rule.quorum,
    allowStandingApproval: over.allowStandingApproval ?? base.rule.allowStandingApproval,
    expiresAfterMs: over.expiresAfter === undefined ? base.rule.expiresAfterMs : over.expiresAfter,
    remindAfterMs: over.remindAfter === undefined ? base.rule.remindAfterMs : over.remindAfter,
    approvalChannel: over.approvalChannel === undefined ? base.rule.approvalChannel : over.approvalChannel,
    standingExpiresAfterMs:
      over.standingApprovalExpiresAfter === undefined
        ? standingExpiry(base.rule)
        : over.standingApprovalExpiresAfter,
    ...notifyLayer(base.rule, over),
    ...escalationLayer(base.rule, over),
    ...limitsLayer(base.rule, over),
    ...breakGlassLayer(base.rule, over),
    ...autoApproveLayer(base.rule, over),
    ...riskLayer(base.rule, over),
  };
  return { requireApproval: over.requireApproval ?? base.requireApproval, rule, ...previewLayer(base, over) };
}

/** `notify` is left out of rules that never set it, so they read as they always did. */
function notifyLayer(base: ApprovalRule, over: FileRule): Pick<ApprovalRule, 'notify'> {
  const notify = over.notify ?? base.notify;
  return notify ? { notify: [...new Set(notify)] } : {};
}

/** Escalation fields are left out of rules that never set them, like `notify`. */
function escalationLayer(
  base: ApprovalRule,
  over: FileRule,
): Pick<ApprovalRule, 'escalateAfterMs' | 'escalateTo'> {
  const after = over.escalateAfter === undefined ? base.escalateAfterMs : over.escalateAfter;
  const to = over.escalateTo ?? base.escalateTo;
  return { ...(after === undefined ? {} : { escalateAfterMs: after }), ...(to ? { escalateTo: to } : {}) };
}

/** Limit fields are left out of rules that never set them, like `notify`. */
function limitsLayer(base: ApprovalRule, over: FileRule): Pick<ApprovalRule, 'limits' | 'overLimit'> {
  const limits = over.limits ?? base.limits;
  const overLimit = over.overLimit ?? base.overLimit;
  return { ...(limits ? { limits } : {}), ...(overLimit ? { overLimit } : {}) };
}

/** `breakGlass` is left out of rules that never set it (break glass allowed), like `notify`. */
function breakGlassLayer(base: ApprovalRule, over: FileRule): Pick<ApprovalRule, 'breakGlass'> {
  const breakGlass = over.breakGlass ?? base.breakGlass;
  return breakGlass === undefined ? {} : { breakGlass };
}

/** `autoApprove` is left out of rules that never set it, like `notify`. */
function autoApproveLayer(base: ApprovalRule, over: FileRule): Pick<ApprovalRule, 'autoApprove'> {
  const auto = over.autoApprove === undefined ? base.autoApprove : over.autoApprove;
  return auto ? { autoApprove: auto } : {};
}
