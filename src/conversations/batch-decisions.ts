import type { ApprovalRecord } from '../approvals/approval.js';
import type { ApprovalService, DecisionRequest } from '../approvals/approval-service.js';
import type { Vote } from '../approvals/ports.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { RunWork } from './run-work.js';

/** The most requests one batch decides; the rest of a longer selection is skipped, and says so. */
export const MAX_BATCH = 50;

/** Several requests decided the same way by one person, from a surface with no conversation (App Home, the web). */
export interface BatchRequest {
  approvalIds: readonly string[];
  /** From the verified request (Slack's signed payload, the console session), never from the selection. */
  userId: string;
  teamId: string;
  vote: Vote;
  /** One reason for every rejected request. */
  reason: string | null;
  surface?: DecisionRequest['surface'];
}

/** A selected request that was not decided, and why: each surface says it in its own words. */
export type BatchSkip =
  | { approvalId: string; kind: 'not_found' }
  | { approvalId: string; kind: 'not_allowed'; message: string }
  | { approvalId: string; kind: 'already_decided' | 'already_voted'; approval: ApprovalRecord }
  /** The decision could not be recorded (nothing changed); the person may try again. */
  | { approvalId: string; kind: 'failed' }
  /** Past `MAX_BATCH`. */
  | { approvalId: string; kind: 'too_many' };

export interface BatchOutcome {
  /** Requests this batch decided (approved or rejected). */
  decided: ApprovalRecord[];
  /** Approvals counted towards a request that needs several; it still waits. */
  counted: ApprovalRecord[];
  skipped: BatchSkip[];
}

export interface BatchDeps {
  approvals: Pick<ApprovalService, 'decide'>;
  /** What follows each decision: the one follow-up, as after a single click. */
  work: Pick<RunWork, 'settled'>;
  logger: Logger;
}

/**
 * Decides each selected request on its own, in the order given (duplicates once): the same permission check,
 * compare-and-set and audit event as a single decision (marked `batch`), each followed up by `work.settled`.
 * One request refused, already decided or failing never stops the others; the outcome says which were skipped.
 *
 * @example
 * const outcome = await decideBatch(deps, { approvalIds: ids, userId, teamId, vote: 'approve', reason: null });
 * // outcome.decided: what changed; outcome.skipped: what to tell the person
 */
export async function decideBatch(deps: BatchDeps, request: BatchRequest): Promise<BatchOutcome> {
  const outcome: BatchOutcome = { decided: [], counted: [], skipped: [] };
  const ids = [...new Set(request.approvalIds)];
  for (const approvalId of ids.slice(MAX_BATCH)) outcome.skipped.push({ approvalId, kind: 'too_many' });
  for (const approvalId of ids.slice(0, MAX_BATCH)) await decideOne(deps, request, approvalId, outcome);
  return outcome;
}

async function decideOne(
  deps: BatchDeps,
  request: BatchRequest,
  approvalId: string,
  outcome: BatchOutcome,
): Promise<void> {
  let result: Awaited<ReturnType<ApprovalService['decide']>>;
  try {
    result = await deps.approvals.decide({
      approvalId,
      userId: request.userId,
      teamId: request.teamId,
      channelId: undefined,
      vote: request.vote,
      reason: request.vote === 'reject' ? request.reason : null,
      batch: true,
      ...(request.surface ? { surface: request.surface } : {}),
    });
  } catch (error) {
    // The decision is one transaction: nothing of it was recorded.
    deps.logger.error('batch decision could not be recorded', { approvalId, error: describeError(error) });
    outcome.skipped.push({ approvalId, kind: 'failed' });
    return;
  }
  switch (result.kind) {
    case 'decided':
      outcome.decided.push(result.approval);
      deps.work.settled({ kind: 'decided', approval: result.approval, runClaimed: result.runClaimed });
      return;
    case 'counted':
      outcome.counted.push(result.approval);
      deps.work.settled({ kind: 'counted', approval: result.approval, approvers: result.approvers });
      return;
    case 'not_found':
      outcome.skipped.push({ approvalId, kind: 'not_found' });
      return;
    case 'not_allowed':
      outcome.skipped.push({ approvalId, kind: 'not_allowed', message: result.message });
      return;
    case 'already_decided':
    case 'already_voted':
      outcome.skipped.push({ approvalId, kind: result.kind, approval: result.approval });
  }
}
