import { type AuditInput, auditEvent } from '../audit/audit-event.js';
import { type ApprovalRecord, approvalScope } from './approval.js';
import type { Vote } from './ports.js';

/** A person the request's rule refused, in the request's workspace: `approval.refused` with why. */
export function refusedEvent(
  approval: ApprovalRecord,
  request: { userId: string; vote: Vote; breakGlass?: unknown },
  reason: string,
  at: number,
): AuditInput {
  return auditEvent('approval.refused', {
    at,
    actor: request.userId,
    ...approvalScope(approval),
    payload: {
      vote: request.vote,
      reason,
      rule: approval.rule,
      ...(request.breakGlass ? { breakGlass: true } : {}),
    },
  });
}

/**
 * A decision on a request the person cannot reach: an unknown ID, or a request of another workspace (a forged
 * payload naming it). Both are recorded alike, in the person's own workspace, with the ID they sent and
 * reason `unknown_request`; the event never names the other workspace's request (no approval, run or
 * conversation), so nothing of it shows in the person's workspace's audit log.
 */
export function unknownRequestEvent(
  request: { approvalId: string; userId: string; teamId: string; vote: Vote },
  at: number,
): AuditInput {
  // No organisation: the one the payload names is not vouched for when the request is out of reach.
  return auditEvent('approval.refused', {
    at,
    actor: request.userId,
    teamId: request.teamId,
    payload: { vote: request.vote, reason: 'unknown_request', requested: request.approvalId },
  });
}
