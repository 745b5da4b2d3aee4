import { sql } from 'drizzle-orm';
import { RunStopped, type RunStore } from '../agent/ports.js';
import type { ApprovalRecord } from '../approvals/approval.js';
import { cancelledByRunEnd } from '../approvals/decision-rules.js';
import type { AuditInput } from '../audit/audit-event.js';
import { AppError } from '../errors.js';
import { approvalsOfTurn, toApprovalRecord } from './approval-rows.js';
import { countRequest, lockLimitKeys } from './limit-rows.js';
import {
  conversationOf,
  historyOf,
  insertItems,
  leaseColumns,
  lockLeasedRun,
  oweCard,
  oweCardRefresh,
  oweReply,
  RELEASED,
  runById,
  stateColumns,
} from './run-rows.js';
import { readOptionalString, readString } from './sql/columns.js';
import { audit, count, row, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/** The runner's store: every write holds the run first and checks the writer's claim on it. */
export function createRunStore(ctx: StoreContext): RunStore {
  const { db, clock } = ctx;
  return {
    getRun: (runId) => db.read(() => runById(ctx, runId)),

    loadHistory: (conversationId) => db.read(() => historyOf(conversationId)),

    saveTurn(lease, { state, status, items, approvals: created, audit: events, reply }) {
      const { runId } = lease;
      const at = clock.now();
      return db.write(function* () {
        const run = yield* lockLeasedRun(ctx, lease);
        const conversationId = conversationOf(run);
        const conversation = yield* row(sql`select * from conversations where id = ${conversationId}`);
        if (!conversation)
          throw new AppError('conversation.not_found', `Conversation ${conversationId} not found`);
        yield* insertItems(conversationId, runId, state.turn, items, at);
        const stored: ApprovalRecord[] = [];
        const scope = {
          at,
          actor: readString(run, 'requester_id'),
          teamId: readString(conversation, 'team_id'),
          enterpriseId: readOptionalString(conversation, 'enterprise_id'),
          conversationId,
          runId,
        };
        yield* lockLimitKeys(ctx, created);
        const replaced = new Map<string, AuditInput[]>();
        for (const approval of created) {
          const { rule, automatic, refusedReason, audit: limitEvents } = yield* countRequest(approval, scope);
          if (limitEvents) replaced.set(approval.id, limitEvents);
          const decided = automatic
            ? sql`'approved', ${automatic.decidedBy}, ${at}, ${automatic.originApprovalId}`
            : refusedReason === null
              ? sql`'pending', null, null, null`
              : sql`'cancelled', null, null, null`;
          const [inserted] =
            yield* rows(sql`insert into approvals (id, run_id, conversation_id, team_id, enterprise_id, turn,
              call_id, tool_name, arguments, arguments_hash, rule, status, decided_by, decided_at,
              origin_approval_id, reason, requester_id, channel_id, thread_ts, expires_at, remind_at, review,
              preview, agent_chain, created_at, updated_at)
            values (${approval.id}, ${runId}, ${conversationId}, ${scope.teamId},
              ${scope.enterpriseId},
              ${state.turn}, ${approval.callId}, ${approval.toolName}, ${approval.arguments},
              ${approval.argumentsHash}, ${JSON.stringify(rule)}, ${decided}, ${refusedReason},
              ${scope.actor}, ${readString(conversation, 'channel_id')},
              ${readString(conversation, 'thread_ts')}, ${approval.expiresAt}, ${approval.remindAt},
              ${approval.review ? JSON.stringify(approval.review) : null}, ${approval.preview ?? null},
              ${approval.agentChain ? JSON.stringify(approval.agentChain) : null}, ${at}, ${at})
            returning *`);
          if (!inserted) throw new AppError('database.not_stored', `Approval ${approval.id} was not stored`);
          const record = toApprovalRecord(inserted);
          if (record.status === 'pending') yield* oweCard(ctx, record, at);
          stored.push(record);
        }
        // A completed run gives its lease up; any other status keeps driving (and keeps the lease).
        const held = status === 'completed' ? RELEASED : leaseColumns(ctx, at);
        yield* count(sql`update runs set ${stateColumns(state, at)}, status = ${status}, ${held}
          where id = ${runId}`);
        if (reply !== undefined) yield* oweReply(ctx, { id: runId, conversationId }, reply, at);
        // A request a limit refused or sent to admins has the events of that fate instead of those planned.
        yield* audit([
          ...events.filter((event) => event.approvalId === null || !replaced.has(event.approvalId)),
          ...[...replaced.values()].flat(),
        ]);
        return stored;
      });
    },

    saveSummary(lease, item) {
      const at = clock.now();
      return db.write(function* () {
        const run = yield* lockLeasedRun(ctx, lease);
        yield* insertItems(conversationOf(run), lease.runId, null, [item], at);
        yield* count(sql`update runs set ${leaseColumns(ctx, at)} where id = ${lease.runId}`);
      });
    },

    approvalsForTurn: (runId, turn) => db.read(() => approvalsOfTurn(runId, turn)),

    pauseIfPending(lease, turn, events) {
      const { runId } = lease;
      const at = clock.now();
      return db.write(function* () {
        const run = yield* lockLeasedRun(ctx, lease);
        // A stop recorded while the turn was settled (a tool ran) ends the run instead of leaving it waiting.
        const stoppedBy = readOptionalString(run, 'stop_requested_by');
        if (stoppedBy !== null) throw new RunStopped(runId, stoppedBy);
        const waiting = yield* row(sql`select id from approvals
          where run_id = ${runId} and turn = ${turn} and status = 'pending' limit 1`);
        if (!waiting) return false;
        yield* count(sql`update runs set status = 'paused', ${RELEASED}, updated_at = ${at}
          where id = ${runId} and status = 'running'`);
        yield* audit(events);
        return true;
      });
    },

    markExecuting(lease, approvalId, events) {
      const { runId } = lease;
      const at = clock.now();
      return db.write(function* () {
        yield* lockLeasedRun(ctx, lease);
        const changed = yield* count(sql`update approvals set status = 'executing', updated_at = ${at}
          where id = ${approvalId} and run_id = ${runId} and status = 'approved'`);
        if (changed !== 1) return false;
        yield* count(sql`update runs set ${leaseColumns(ctx, at)} where id = ${runId}`);
        yield* audit(events);
        return true;
      });
    },

    saveToolOutput(lease, { state, item, approval, audit: events }) {
      const { runId } = lease;
      const at = clock.now();
      return db.write(function* () {
        const run = yield* lockLeasedRun(ctx, lease);
        const turn = state.pausedTurn?.turn ?? state.turn;
        if (item) yield* insertItems(conversationOf(run), runId, turn, [item], at);
        if (approval) {
          yield* count(sql`update approvals set status = ${approval.status}, result = ${approval.result},
            updated_at = ${at} where id = ${approval.id}`);
        }
        yield* count(
          sql`update runs set ${stateColumns(state, at)}, ${leaseColumns(ctx, at)} where id = ${runId}`,
        );
        yield* audit(events);
      });
    },

    finishRun(lease, { status, error, audit: events, cancelAudit, reply, state }) {
      const { runId } = lease;
      const at = clock.now();
      return db.write(function* () {
        const run = yield* lockLeasedRun(ctx, lease);
        yield* count(sql`update runs set status = ${status}, error = ${error}, updated_at = ${at}, ${RELEASED}
          where id = ${runId}`);
        if (state) yield* count(sql`update runs set ${stateColumns(state, at)} where id = ${runId}`);
        const ofRun =
          yield* rows(sql`select * from approvals where run_id = ${runId} order by created_at, call_id
          ${db.dialect.forUpdate}`);
        const cancelled: ApprovalRecord[] = [];
        for (const approval of ofRun.map(toApprovalRecord)) {
          if (!cancelledByRunEnd(approval.status)) continue;
          const [updated] = yield* rows(sql`update approvals set status = 'cancelled', reason = ${error},
            updated_at = ${at} where id = ${approval.id} returning *`);
          yield* count(sql`delete from deliveries where id = ${`card:${approval.id}`}`);
          if (!updated) continue;
          const record = toApprovalRecord(updated);
          cancelled.push(record);
          yield* oweCardRefresh(ctx, record, at);
        }
        if (reply !== undefined)
          yield* oweReply(ctx, { id: runId, conversationId: conversationOf(run) }, reply, at);
        yield* audit([...events, ...cancelled.map(cancelAudit)]);
        return cancelled;
      });
    },

    renewLease(runId) {
      const at = clock.now();
      return db.write(function* () {
        const renewed = yield* count(sql`update runs set lease_until = ${at + ctx.leaseMs}
          where id = ${runId} and status = 'running' and lease_owner = ${ctx.owner}`);
        if (renewed === 1) return true;
        // Not lost when the run paused or ended meanwhile: then nobody drives it.
        const now = yield* row(sql`select status, lease_owner from runs where id = ${runId}`);
        return now?.status !== 'running';
      });
    },

    stopRequest: (runId) =>
      db.read(function* () {
        const found = yield* row(sql`select stop_requested_by from runs where id = ${runId}`);
        return (found && readOptionalString(found, 'stop_requested_by')) ?? undefined;
      }),
  };
}
