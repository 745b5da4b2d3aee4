import { type AuditInput, auditEvent } from '../audit/audit-event.js';
import { type ApprovalRule, agentFields, formatDuration } from './approval.js';
import type { LimitReached, LimitVerdict } from './approval-limits.js';

/** What becomes of a request once its limits are counted. */
export type LimitOutcome =
  | { kind: 'within' }
  /** Not offered: stored `cancelled` with `reason`; its rule records the limit. */
  | { kind: 'refused'; rule: ApprovalRule; reason: string }
  /** Offered to admins only (`overLimit: "admins"`), never covered by a standing approval. */
  | { kind: 'admins'; rule: ApprovalRule };

/** Pure: the request's fate under its rule's `overLimit` (refused by default). */
export function limitOutcome(tool: string, rule: ApprovalRule, verdict: LimitVerdict): LimitOutcome {
  if (!verdict.over) return { kind: 'within' };
  const { reached } = verdict;
  const action = rule.overLimit ?? 'refuse';
  switch (action) {
    case 'refuse':
      return {
        kind: 'refused',
        rule: { ...rule, limitReached: reached },
        reason: limitSentence(tool, reached),
      };
    case 'admins': {
      // Admins only: nobody the rule named otherwise, not after an escalation either.
      const { escalateAfterMs: _after, escalateTo: _to, ...rest } = rule;
      return {
        kind: 'admins',
        rule: { ...rest, approvers: ['admins'], allowStandingApproval: false, limitReached: reached },
      };
    }
  }
}

/** "2 requests per requester in 24h". */
export function describeLimit(limit: Pick<LimitReached, 'max' | 'per' | 'windowMs'>): string {
  return `${limit.max} ${limit.max === 1 ? 'request' : 'requests'} per ${limit.per} in ${formatDuration(limit.windowMs)}`;
}

/** "2025-03-01 14:05 UTC": the same for every reader, the model included. */
export function resetTime(at: number): string {
  return `${new Date(at).toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** Why a request was not offered, for the request's reason and the thread. */
export function limitSentence(tool: string, reached: LimitReached): string {
  return `the limit on ${tool} of ${describeLimit(reached)} was reached (${reached.count} offered); it resets at ${resetTime(reached.resetsAt)}`;
}

/** What the model reads for a call a limit refused. */
export function limitOutput(tool: string, reached: LimitReached): string {
  return `Tool execution was not offered for approval: ${limitSentence(tool, reached)}. Do not retry this call before then.`;
}

/** What the thread is told about a request a limit refused or sent to admins. */
export function limitNote(tool: string, reached: LimitReached, routed: boolean): string {
  const what = routed ? 'was sent to admins only' : 'was not offered for approval';
  return `\`${tool}\` ${what}: ${limitSentence(tool, reached)}.`;
}

/** Where a request was made, for its audit events. */
export interface LimitAuditScope {
  at: number;
  actor: string;
  teamId: string;
  enterpriseId: string | null;
  conversationId: string;
  runId: string;
}

/**
 * The audit events of a request past a limit, replacing those planned for it: `approval.limited` (the limit,
 * the count, the reset time), and for one sent to admins its `approval.requested` under the admins' rule.
 */
export function limitedAudit(
  scope: LimitAuditScope,
  request: {
    approvalId: string;
    tool: string;
    callId: string;
    arguments: unknown;
    agentChain?: readonly string[] | undefined;
  },
  outcome: Exclude<LimitOutcome, { kind: 'within' }>,
): AuditInput[] {
  const { approvalId, tool, callId, arguments: args } = request;
  const agent = agentFields(request.agentChain);
  const reached = outcome.rule.limitReached;
  const limited = auditEvent('approval.limited', {
    ...scope,
    approvalId,
    payload: {
      tool,
      callId,
      arguments: args,
      ...agent,
      limit: reached && { per: reached.per, max: reached.max, window: formatDuration(reached.windowMs) },
      count: reached?.count,
      resetsAt: reached && new Date(reached.resetsAt).toISOString(),
      outcome: outcome.kind,
    },
  });
  if (outcome.kind === 'refused') return [limited];
  const requested = auditEvent('approval.requested', {
    ...scope,
    approvalId,
    payload: { tool, callId, arguments: args, ...agent, rule: outcome.rule },
  });
  return [limited, requested];
}
