import { and, asc, eq, inArray } from 'drizzle-orm';
import { type HistoryItem, historyItemSchema, type StoredItem } from '../agent/history.js';
import type { Clock, RunRecord, RunStore } from '../agent/ports.js';
import { CURRENT_RUN_STATE_VERSION, type RunState, serializeRunState } from '../agent/run-state.js';
import { toApprovalRecord } from './approval-rows.js';
import { appendAudit, type Tx } from './audit-writer.js';
import type { Db } from './database.js';
import { approvals, conversationItems, conversations, runs } from './schema.js';
import { createStandingApprovalStore } from './standing-approvals.js';

/** Appends history items inside a transaction. */
export function insertItems(
  tx: Tx,
  conversationId: string,
  runId: string | null,
  turn: number | null,
  items: readonly HistoryItem[],
  at: number,
): void {
  for (const item of items) {
    tx.insert(conversationItems)
      .values({
        conversationId,
        runId,
        turn,
        kind: item.kind,
        data: JSON.stringify(item.data),
        createdAt: at,
      })
      .run();
  }
}

/** The state columns of a run row for a given state. */
export function runStateColumns(state: RunState, at: number) {
  return {
    state: serializeRunState(state),
    schemaVersion: CURRENT_RUN_STATE_VERSION,
    turn: state.turn,
    updatedAt: at,
  };
}

export function createRunStore(db: Db, clock: Clock): RunStore {
  return {
    ...createStandingApprovalStore(db),

    getRun(runId) {
      const row = db
        .select({ run: runs, conversation: conversations })
        .from(runs)
        .innerJoin(conversations, eq(conversations.id, runs.conversationId))
        .where(eq(runs.id, runId))
        .get();
      if (!row) return undefined;
      const record: RunRecord = {
        id: row.run.id,
        conversationId: row.run.conversationId,
        status: row.run.status,
        state: row.run.state,
        requesterId: row.run.requesterId,
        teamId: row.conversation.teamId,
        channelId: row.conversation.channelId,
        threadTs: row.conversation.threadTs,
      };
      return record;
    },

    loadHistory(conversationId) {
      const rows = db
        .select()
        .from(conversationItems)
        .where(eq(conversationItems.conversationId, conversationId))
        .orderBy(asc(conversationItems.id))
        .all();
      return rows.map(
        (row): StoredItem => ({
          ...historyItemSchema.parse({ kind: row.kind, data: JSON.parse(row.data) }),
          runId: row.runId,
          turn: row.turn,
        }),
      );
    },

    saveTurn({ runId, state, status, items, approvals: created, audit, reply }) {
      const at = clock.now();
      return db.transaction(
        (tx) => {
          const run = tx.select().from(runs).where(eq(runs.id, runId)).get();
          if (!run) throw new Error(`Run ${runId} not found`);
          const conversation = tx
            .select()
            .from(conversations)
            .where(eq(conversations.id, run.conversationId))
            .get();
          if (!conversation) throw new Error(`Conversation ${run.conversationId} not found`);
          insertItems(tx, run.conversationId, runId, state.turn, items, at);
          const rows = created.map(({ automatic, ...approval }) =>
            tx
              .insert(approvals)
              .values({
                ...approval,
                ...(automatic
                  ? {
                      decidedBy: automatic.grantedBy,
                      decidedAt: at,
                      originApprovalId: automatic.originApprovalId,
                    }
                  : {}),
                rule: JSON.stringify(approval.rule),
                runId,
                conversationId: run.conversationId,
                teamId: conversation.teamId,
                turn: state.turn,
                status: automatic ? 'approved' : 'pending',
                requesterId: run.requesterId,
                channelId: conversation.channelId,
                threadTs: conversation.threadTs,
                createdAt: at,
                updatedAt: at,
              })
              .returning()
              .get(),
          );
          tx.update(runs)
            .set({
              ...runStateColumns(state, at),
              status,
              ...(reply === undefined ? {} : { pendingReply: reply }),
            })
            .where(eq(runs.id, runId))
            .run();
          appendAudit(tx, audit);
          return rows.map(toApprovalRecord);
        },
        { behavior: 'immediate' },
      );
    },

    approvalsForTurn(runId, turn) {
      return db
        .select()
        .from(approvals)
        .where(and(eq(approvals.runId, runId), eq(approvals.turn, turn)))
        .all()
        .map(toApprovalRecord);
    },

    pauseIfPending(runId, turn, audit) {
      return db.transaction(
        (tx) => {
          const waiting = tx
            .select({ id: approvals.id })
            .from(approvals)
            .where(and(eq(approvals.runId, runId), eq(approvals.turn, turn), eq(approvals.status, 'pending')))
            .get();
          if (!waiting) return false;
          const { changes } = tx
            .update(runs)
            .set({ status: 'paused', updatedAt: clock.now() })
            .where(and(eq(runs.id, runId), eq(runs.status, 'running')))
            .run();
          if (changes === 1) appendAudit(tx, audit);
          return changes === 1;
        },
        { behavior: 'immediate' },
      );
    },

    markExecuting(approvalId, audit) {
      return db.transaction(
        (tx) => {
          const { changes } = tx
            .update(approvals)
            .set({ status: 'executing', updatedAt: clock.now() })
            .where(and(eq(approvals.id, approvalId), eq(approvals.status, 'approved')))
            .run();
          if (changes !== 1) return false;
          appendAudit(tx, audit);
          return true;
        },
        { behavior: 'immediate' },
      );
    },

    saveToolOutput({ runId, state, item, approval, audit }) {
      const at = clock.now();
      db.transaction(
        (tx) => {
          const run = tx
            .select({ conversationId: runs.conversationId })
            .from(runs)
            .where(eq(runs.id, runId))
            .get();
          if (!run) throw new Error(`Run ${runId} not found`);
          insertItems(tx, run.conversationId, runId, state.pausedTurn?.turn ?? state.turn, [item], at);
          if (approval) {
            tx.update(approvals)
              .set({ status: approval.status, result: approval.result, updatedAt: at })
              .where(eq(approvals.id, approval.id))
              .run();
          }
          tx.update(runs).set(runStateColumns(state, at)).where(eq(runs.id, runId)).run();
          appendAudit(tx, audit);
        },
        { behavior: 'immediate' },
      );
    },

    finishRun({ runId, status, error, audit, cancelAudit, reply }) {
      const at = clock.now();
      return db.transaction(
        (tx) => {
          tx.update(runs)
            .set({ status, error, updatedAt: at, ...(reply === undefined ? {} : { pendingReply: reply }) })
            .where(eq(runs.id, runId))
            .run();
          // Pending, or approved but never executed: nothing of the run may execute any more.
          const cancelled = tx
            .update(approvals)
            .set({ status: 'cancelled', reason: error, updatedAt: at })
            .where(and(eq(approvals.runId, runId), inArray(approvals.status, ['pending', 'approved'])))
            .returning()
            .all()
            .map(toApprovalRecord);
          appendAudit(tx, [...audit, ...cancelled.map(cancelAudit)]);
          return cancelled;
        },
        { behavior: 'immediate' },
      );
    },
  };
}
