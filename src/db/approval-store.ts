import { sql } from 'drizzle-orm';
import { APPROVAL_STATUSES, type ApprovalRecord } from '../approvals/approval.js';
import {
  runResumedEvent,
  secondSay,
  standingGrantedEvent,
  tallyVotes,
  turnSettled,
} from '../approvals/decision-rules.js';
import type { ApprovalStore } from '../approvals/ports.js';
import type { AuditInput } from '../audit/audit-event.js';
import { AppError } from '../errors.js';
import { approvalById, approvalsOfTurn, toApprovalRecord } from './approval-rows.js';
import { claimColumns, oweCardRefresh } from './run-rows.js';
import { readEnum, readOptionalString, readString } from './sql/columns.js';
import { audit, count, type Program, row, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/** Requests and their votes. */
export function createApprovalStore(ctx: StoreContext): ApprovalStore {
  const { db, clock } = ctx;
  return {
    get: (approvalId) => db.read(() => approvalById(approvalId)),

    approvers: (approvalId) => db.read(() => approversOf(approvalId)),

    vote({
      approvalId,
      userId,
      vote,
      reason,
      standing,
      editedArguments,
      onBehalfOf,
      breakGlass,
      cardFallback,
      audit: events,
    }) {
      const at = clock.now();
      const fallback = cardFallback ? { fallback: cardFallback } : {};
      return db.write(function* () {
        const current = yield* lockRunThenApproval(ctx, approvalId);
        if (current.status !== 'pending') return { kind: 'already_decided' as const, approval: current };
        // Under the run's lock no other request of the turn changes (every change of a request's status holds
        // its run), so the turn is read with the votes, in one statement, before this vote decides.
        const { cast, turn } = yield* votesAndTurn(current);
        if (secondSay(cast, { userId, onBehalfOf: onBehalfOf ?? null }))
          return { kind: 'already_voted' as const, approval: current };
        const inserted = yield* count(sql`insert into approval_votes
            (approval_id, user_id, vote, on_behalf_of, created_at)
          values (${approvalId}, ${userId}, ${vote}, ${onBehalfOf ?? null}, ${at}) on conflict do nothing`);
        if (inserted === 0) return { kind: 'already_voted' as const, approval: current };
        const tally = tallyVotes(current.rule, [...cast, { userId, vote }], Boolean(breakGlass));
        if (tally.kind === 'counted') {
          yield* oweCardRefresh(ctx, current, at, fallback);
          yield* audit(events);
          return { kind: 'counted' as const, approval: current, approvers: tally.approvers };
        }
        const edited = tally.status === 'approved' && editedArguments ? editedArguments : null;
        const glass = tally.status === 'approved' ? (breakGlass ?? null) : null;
        const [updated] = yield* rows(sql`update approvals set status = ${tally.status},
            decided_by = ${tally.decidedBy}, decided_at = ${at}, reason = ${reason},
            break_glass_by = ${glass ? userId : null}, break_glass_reason = ${glass?.justification ?? null},
            edited_arguments = coalesce(${edited}, edited_arguments), updated_at = ${at}
          where id = ${approvalId} and status = 'pending' returning *`);
        if (!updated)
          throw new AppError(
            'approval.changed_concurrently',
            `Approval ${approvalId} changed inside its transaction`,
          );
        const decided = toApprovalRecord(updated);
        const granted: AuditInput[] = [];
        if (tally.status === 'approved' && standing) {
          yield* count(sql`insert into standing_approvals
              (conversation_id, tool_name, granted_by, origin_approval_id, granted_at)
            values (${decided.conversationId}, ${decided.toolName}, ${userId}, ${decided.id}, ${at})`);
          granted.push(standingGrantedEvent(decided, userId, at));
        }
        yield* oweCardRefresh(ctx, decided, at, { ...fallback, ...(standing ? { standing: true } : {}) });
        yield* audit([...events, ...granted]);
        const settledTurn = turn.map((other) => (other.id === decided.id ? decided : other));
        const runClaimed = yield* claimRunIfSettled(ctx, decided, userId, at, settledTurn);
        return { kind: 'decided' as const, approval: decided, runClaimed };
      });
    },

    pendingIn: (conversationId) =>
      db.read(function* () {
        const found = yield* rows(sql`select * from approvals where conversation_id = ${conversationId}
          and status = 'pending' order by created_at, call_id`);
        return found.map(toApprovalRecord);
      }),

    recordAudit: (events) => db.write(() => audit(events)),
  };
}

/**
 * Locks the request's run, then the request (the order every transaction takes them in), and returns the
 * request as it is now, in one statement: the sub-select that finds and locks the run depends on nothing of the
 * outer row, so it is evaluated once, first (a one-time filter), then the request is found by its key and
 * locked; a request changed while the run was awaited is read again by its lock (PostgreSQL rechecks a row it
 * locks against its newest version).
 */
export function* lockRunThenApproval(ctx: StoreContext, approvalId: string): Program<ApprovalRecord> {
  const { forUpdate } = ctx.db.dialect;
  const locked = yield* row(sql`select * from approvals where id = ${approvalId}
    and coalesce(
      (select id from runs where id = (select run_id from approvals where id = ${approvalId}) ${forUpdate}),
      'no run'
    ) is not null
    ${forUpdate}`);
  // The sub-select only takes the run's lock: a request whose run has no row is still found, locked and decided
  // (reported missing, it would also stop a deadline check at it, leaving the tick's later deadlines unhandled).
  if (!locked) throw new AppError('approval.not_found', `Approval ${approvalId} not found`);
  return toApprovalRecord(locked);
}

/**
 * When `turnSettled` says the settled request's turn waits for nobody, claims the run (paused -> running,
 * leased to this process) with a compare-and-set, so exactly one caller, whether a decision (`actor` the
 * person) or an expiry (`system`), resumes it, and records `run.resumed`. Call holding the run.
 */
export function* claimRunIfSettled(
  ctx: StoreContext,
  settled: ApprovalRecord,
  actor: string,
  at: number,
  /** The turn's requests as they are now, when the caller has read them holding the run. */
  turn?: readonly Pick<ApprovalRecord, 'status'>[],
): Program<boolean> {
  if (!turnSettled(turn ?? (yield* approvalsOfTurn(settled.runId, settled.turn)))) return false;
  const claimed = yield* count(sql`update runs set status = 'running', ${claimColumns(ctx, at)},
    updated_at = ${at} where id = ${settled.runId} and status = 'paused'`);
  if (claimed === 1) yield* audit([runResumedEvent(settled, actor, at)]);
  return claimed === 1;
}

/** Every vote in order, with whom it was cast for (a delegation). */
export function* votesOf(approvalId: string) {
  const found = yield* rows(sql`select user_id, vote, on_behalf_of from approval_votes
    where approval_id = ${approvalId} order by created_at`);
  return found.map((v) => ({
    userId: readString(v, 'user_id'),
    vote: readEnum(v, 'vote', ['approve', 'reject'] as const),
    onBehalfOf: readOptionalString(v, 'on_behalf_of'),
  }));
}

/** A request's votes in order and the status of every request of its turn, in one statement. */
function* votesAndTurn(approval: ApprovalRecord) {
  const found = yield* rows(sql`select 'vote' as row_kind, user_id as id, vote as value, on_behalf_of,
      created_at from approval_votes where approval_id = ${approval.id}
    union all
    select 'turn', id, status, null, created_at from approvals
      where run_id = ${approval.runId} and turn = ${approval.turn}
    order by row_kind desc, created_at`);
  const cast = found
    .filter((r) => r.row_kind === 'vote')
    .map((v) => ({
      userId: readString(v, 'id'),
      vote: readEnum(v, 'value', ['approve', 'reject'] as const),
      onBehalfOf: readOptionalString(v, 'on_behalf_of'),
    }));
  const turn = found
    .filter((r) => r.row_kind === 'turn')
    .map((t) => ({
      id: readString(t, 'id'),
      status: readEnum(t, 'value', APPROVAL_STATUSES),
    }));
  return { cast, turn };
}

/** Who approved so far, in order. */
export function* approversOf(approvalId: string): Program<string[]> {
  return (yield* votesOf(approvalId)).filter((v) => v.vote === 'approve').map((v) => v.userId);
}
