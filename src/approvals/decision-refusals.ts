import { type ApprovalRecord, decisionOptions } from './approval.js';
import type { DecisionPermission } from './policy.js';
import type { Vote } from './ports.js';

/** The sentence that tells a refused person why, and who may decide instead. */
export function refusal(
  approval: ApprovalRecord,
  permission: Exclude<DecisionPermission, { ok: true }>,
): string {
  switch (permission.reason) {
    case 'self_approval':
      return `You asked for this, and ${approval.toolName} cannot be approved by the person who asked. It can be decided by ${permission.approvers}.`;
    case 'not_an_approver':
      return `You cannot decide this request. It can be decided by ${permission.approvers}.`;
  }
}

/** Standing approvals and edits are approvals by one person; a rule can forbid them. */
export function unavailableOption(
  approval: ApprovalRecord,
  request: { vote: Vote; standing?: boolean | undefined },
  edit: boolean,
): string | undefined {
  if (request.vote !== 'approve') return undefined;
  const offered = decisionOptions(approval.rule);
  if (request.standing && !approval.rule.allowStandingApproval)
    return `${approval.toolName} cannot be approved for the whole thread; approve this call on its own.`;
  // Allowed by the rule, yet not offered: the request needs several approvals.
  if ((request.standing && !offered.standing) || (edit && !offered.edit))
    return `This request needs ${approval.rule.quorum} approvals, so it can only be approved as it is.`;
  return undefined;
}
