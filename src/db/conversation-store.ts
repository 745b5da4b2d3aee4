import { and, asc, eq, inArray, isNotNull, isNull } from 'drizzle-orm';
import type { HistoryItem } from '../agent/history.js';
import type { Clock, IdGenerator } from '../agent/ports.js';
import type { RunState } from '../agent/run-state.js';
import type { ConversationStore } from '../conversations/ports.js';
import { toApprovalRecord } from './approval-rows.js';
import { appendAudit, type Tx } from './audit-writer.js';
import type { Db } from './database.js';
import { insertItems, runStateColumns } from './run-store.js';
import { approvals, conversationItems, conversations, queuedMessages, runs } from './schema.js';

export function createConversationStore(db: Db, clock: Clock, newId: IdGenerator): ConversationStore {
  const find: ConversationStore['find'] = ({ teamId, channelId, threadTs }) =>
    db
      .select({ id: conversations.id })
      .from(conversations)
      .where(
        and(
          eq(conversations.teamId, teamId),
          eq(conversations.channelId, channelId),
          eq(conversations.threadTs, threadTs),
        ),
      )
      .get()?.id;

  return {
    find,

    findOrCreate(thread) {
      const existing = find(thread);
      if (existing) return existing;
      db.insert(conversations)
        .values({ id: newId('conv'), ...thread, createdAt: clock.now() })
        .onConflictDoNothing()
        .run();
      const created = find(thread);
      if (!created) throw new Error('Conversation could not be created');
      return created;
    },

    thread(conversationId) {
      const row = db.select().from(conversations).where(eq(conversations.id, conversationId)).get();
      return row ? { teamId: row.teamId, channelId: row.channelId, threadTs: row.threadTs } : undefined;
    },

    startRunOrQueue({ conversationId, runId, message, state, audit, context }) {
      const at = clock.now();
      return db.transaction(
        (tx) => {
          const active = activeRunStatus(tx, conversationId);
          if (active) {
            tx.insert(queuedMessages)
              .values({
                conversationId,
                userId: message.userId,
                text: message.text,
                messageTs: message.messageTs,
                createdAt: at,
              })
              .run();
            return active === 'paused' ? ('queued_behind_approval' as const) : ('queued' as const);
          }
          insertRun(tx, { conversationId, runId, requesterId: message.userId, state, at });
          if (context && !hasHistory(tx, conversationId))
            insertItems(tx, conversationId, null, null, [context], at);
          insertItems(tx, conversationId, runId, 0, [userItem(message)], at);
          appendAudit(tx, audit);
          return 'started' as const;
        },
        { behavior: 'immediate' },
      );
    },

    startNextQueuedRun({ conversationId, runId, state, audit }) {
      const at = clock.now();
      return db.transaction(
        (tx) => {
          if (hasActiveRun(tx, conversationId)) return undefined;
          const next = tx
            .select()
            .from(queuedMessages)
            .where(eq(queuedMessages.conversationId, conversationId))
            .orderBy(asc(queuedMessages.id))
            .limit(1)
            .get();
          if (!next) return undefined;
          tx.delete(queuedMessages).where(eq(queuedMessages.id, next.id)).run();
          const message = { id: next.id, userId: next.userId, text: next.text, messageTs: next.messageTs };
          insertRun(tx, { conversationId, runId, requesterId: message.userId, state, at });
          insertItems(tx, conversationId, runId, 0, [userItem(message)], at);
          appendAudit(tx, audit(message));
          return message;
        },
        { behavior: 'immediate' },
      );
    },

    interruptedRuns() {
      return db
        .select({ runId: runs.id, conversationId: runs.conversationId })
        .from(runs)
        .where(eq(runs.status, 'running'))
        .all();
    },

    approvalsWithoutCard() {
      return db
        .select()
        .from(approvals)
        .where(and(eq(approvals.status, 'pending'), isNull(approvals.messageTs)))
        .all()
        .map(toApprovalRecord);
    },

    setPendingReply(runId, text) {
      db.update(runs).set({ pendingReply: text }).where(eq(runs.id, runId)).run();
    },

    pendingReplies() {
      return db
        .select({ runId: runs.id, conversationId: runs.conversationId, text: runs.pendingReply })
        .from(runs)
        .where(isNotNull(runs.pendingReply))
        .all()
        .flatMap((row) => (row.text === null ? [] : [{ ...row, text: row.text }]));
    },

    unreportedExecutions() {
      return db
        .select()
        .from(approvals)
        .where(and(eq(approvals.status, 'executing'), isNull(approvals.result)))
        .all()
        .map(toApprovalRecord);
    },

    setUnknownOutcome(approvalId, result) {
      db.update(approvals)
        .set({ result, updatedAt: clock.now() })
        .where(and(eq(approvals.id, approvalId), eq(approvals.status, 'executing'), isNull(approvals.result)))
        .run();
    },

    conversationsWithQueue() {
      return db
        .selectDistinct({ id: queuedMessages.conversationId })
        .from(queuedMessages)
        .all()
        .map((row) => row.id);
    },

    setCardMessage(approvalId, channelId, messageTs, audit) {
      db.transaction(
        (tx) => {
          tx.update(approvals)
            .set({ channelId, messageTs, updatedAt: clock.now() })
            .where(eq(approvals.id, approvalId))
            .run();
          appendAudit(tx, audit);
        },
        { behavior: 'immediate' },
      );
    },
  };
}

function insertRun(
  tx: Tx,
  input: { conversationId: string; runId: string; requesterId: string; state: RunState; at: number },
): void {
  const { conversationId, runId, requesterId, state, at } = input;
  tx.insert(runs)
    .values({
      id: runId,
      conversationId,
      status: 'running',
      requesterId,
      createdAt: at,
      ...runStateColumns(state, at),
    })
    .run();
}

function hasHistory(tx: Tx, conversationId: string): boolean {
  const item = tx
    .select({ id: conversationItems.id })
    .from(conversationItems)
    .where(eq(conversationItems.conversationId, conversationId))
    .limit(1)
    .get();
  return item !== undefined;
}

function userItem(message: { userId: string; text: string; messageTs: string }): HistoryItem {
  return {
    kind: 'user_message',
    data: { text: message.text, userId: message.userId, messageTs: message.messageTs },
  };
}

/** One active (running or paused) run per conversation at a time. */
function activeRunStatus(tx: Tx, conversationId: string): 'running' | 'paused' | undefined {
  const active = tx
    .select({ status: runs.status })
    .from(runs)
    .where(and(eq(runs.conversationId, conversationId), inArray(runs.status, ['running', 'paused'])))
    .get();
  return active?.status === 'running' || active?.status === 'paused' ? active.status : undefined;
}

function hasActiveRun(tx: Tx, conversationId: string): boolean {
  return activeRunStatus(tx, conversationId) !== undefined;
}
