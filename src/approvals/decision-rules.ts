import { type AuditInput, auditEvent } from '../audit/audit-event.js';
import { type ApprovalRecord, type ApprovalRule, type ApprovalStatus, approvalScope } from './approval.js';
import type { Vote } from './ports.js';

/**
 * The rules that decide what a vote, an expiry or the end of a run does to requests. Pure functions: the
 * stores call them inside their transactions, holding the rows they read, so both databases apply the same
 * rules and racing processes cannot both act on what they read.
 */

export interface CastVote {
  userId: string;
  vote: Vote;
}

export type Tally =
  /** Approved by fewer people than the quorum so far. */
  | { kind: 'counted'; approvers: string[] }
  /** Settled: approved by the quorum, or rejected by one person. */
  | { kind: 'decided'; status: 'approved' | 'rejected'; decidedBy: string; approvers: string[] };

/**
 * What the votes cast so far (in order, the newest last) make of a request: one rejection ends it; it is
 * approved once `quorum` different people approved, or at once when the newest vote broke glass.
 */
export function tallyVotes(
  rule: Pick<ApprovalRule, 'quorum'>,
  votes: readonly CastVote[],
  breakGlass = false,
): Tally {
  const approvers = votes.filter((v) => v.vote === 'approve').map((v) => v.userId);
  const rejection = votes.find((v) => v.vote === 'reject');
  if (rejection) return { kind: 'decided', status: 'rejected', decidedBy: rejection.userId, approvers };
  if (approvers.length < rule.quorum && !breakGlass) return { kind: 'counted', approvers };
  return { kind: 'decided', status: 'approved', decidedBy: approvers.join(','), approvers };
}

/** A vote as stored: who clicked, and for whom when through a delegation. */
export interface StoredVote {
  userId: string;
  onBehalfOf: string | null;
}

/**
 * Whether a new vote would give someone a second say on a request: its voter already voted, or the person it
 * speaks for (the delegator, else the voter) already has a vote, cast by themselves or by a delegate of theirs.
 */
export function secondSay(votes: readonly StoredVote[], next: StoredVote): boolean {
  const said = new Set(votes.map((vote) => vote.onBehalfOf ?? vote.userId));
  return votes.some((vote) => vote.userId === next.userId) || said.has(next.onBehalfOf ?? next.userId);
}

/** A paused turn can go on once no call of it waits for a decision. */
export function turnSettled(approvalsOfTurn: readonly Pick<ApprovalRecord, 'status'>[]): boolean {
  return approvalsOfTurn.every((approval) => approval.status !== 'pending');
}

/**
 * When a run ends early (failed or cancelled), what it would still have executed must never execute: its
 * pending requests, and those approved but not yet started.
 */
export function cancelledByRunEnd(status: ApprovalStatus): boolean {
  return status === 'pending' || status === 'approved';
}

/** A pending request is reminded at most once a period: after one sent at `now`, the next (null: none). */
export function nextReminderAt(rule: Pick<ApprovalRule, 'remindAfterMs'>, now: number): number | null {
  return rule.remindAfterMs ? now + rule.remindAfterMs : null;
}

/**
 * Whether a pending request is due to be escalated at `now`: its rule escalates, it has not been yet, it waited
 * `escalateAfter`, and it has not expired (expiry wins when it comes first).
 */
export function escalationDue(
  approval: Pick<ApprovalRecord, 'status' | 'rule' | 'createdAt' | 'expiresAt'>,
  now: number,
): boolean {
  const { rule } = approval;
  if (approval.status !== 'pending' || !rule.escalateAfterMs || !rule.escalateTo) return false;
  if (rule.escalatedAt !== undefined) return false;
  if (approval.expiresAt !== null && approval.expiresAt <= now) return false;
  return approval.createdAt + rule.escalateAfterMs <= now;
}

/** The run goes on: recorded by whoever settled its paused turn (a person, or `system` for an expiry). */
export function runResumedEvent(settled: ApprovalRecord, actor: string, at: number): AuditInput {
  return auditEvent('run.resumed', {
    at,
    actor,
    ...approvalScope(settled),
    payload: { turn: settled.turn },
  });
}

/** "Approve for this thread" given with an approval. */
export function standingGrantedEvent(approval: ApprovalRecord, grantedBy: string, at: number): AuditInput {
  return auditEvent('standing.granted', {
    at,
    actor: grantedBy,
    teamId: approval.teamId,
    enterpriseId: approval.enterpriseId ?? null,
    conversationId: approval.conversationId,
    approvalId: approval.id,
    payload: { tool: approval.toolName },
  });
}

/** A grant withdrawn by an admin. */
export function standingRevokedEvent(
  revoked: { conversationId: string; toolName: string; grantedBy: string },
  scope: {
    teamId: string;
    enterpriseId?: string | undefined;
    approvalId: string;
    userId: string;
    at: number;
  },
): AuditInput {
  return auditEvent('standing.revoked', {
    at: scope.at,
    actor: scope.userId,
    teamId: scope.teamId,
    enterpriseId: scope.enterpriseId ?? null,
    conversationId: revoked.conversationId,
    approvalId: scope.approvalId,
    payload: { tool: revoked.toolName, grantedBy: revoked.grantedBy },
  });
}
