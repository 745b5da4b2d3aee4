import { sql } from 'drizzle-orm';
import type { HistoryItem } from '../agent/history.js';
import type { RunState } from '../agent/run-state.js';
import type { AuditInput } from '../audit/audit-event.js';
import { stopEffect } from '../conversations/stop-permission.js';
import type { ConversationStore, StopRecorded } from '../conversations/store-ports.js';
import type { IncomingMessage, ThreadRef } from '../conversations/surface-ports.js';
import { AppError } from '../errors.js';
import { activeRunStatus, claimColumns, insertItems, insertRun } from './run-rows.js';
import { readNumber, readOptionalNumber, readOptionalString, readString } from './sql/columns.js';
import { audit, count, type Program, row } from './sql/program.js';
import type { StoreContext } from './store-context.js';
import { threadOf } from './thread-rows.js';

/** Conversations, and the start of their runs: one active run per conversation, later messages queued. */
export function createConversationStore(ctx: StoreContext): ConversationStore {
  const { db, clock } = ctx;
  return {
    find: (thread) => db.read(() => conversationIdOf(thread)),

    async findOrCreate(thread, surface) {
      const existing = await db.read(() => conversationIdOf(thread));
      if (existing) return existing;
      const id = ctx.newId('conv');
      return db.write(function* () {
        yield* count(sql`insert into conversations (id, team_id, enterprise_id, channel_id, thread_ts, surface,
            created_at)
          values (${id}, ${thread.teamId}, ${thread.enterpriseId ?? null}, ${thread.channelId}, ${thread.threadTs},
            ${surface}, ${clock.now()})
          on conflict (team_id, channel_id, thread_ts) do nothing`);
        const created = yield* conversationIdOf(thread);
        if (!created) throw new AppError('database.not_stored', 'Conversation could not be created');
        return created;
      });
    },

    thread: (conversationId) =>
      db.read(function* () {
        const found = yield* row(sql`select team_id, enterprise_id, channel_id, thread_ts from conversations
          where id = ${conversationId}`);
        if (!found) return undefined;
        return threadOf(found);
      }),

    startRunOrQueue({ conversationId, runId, message, state, audit: events, context }) {
      const at = clock.now();
      return db.write(() =>
        startOrQueue(ctx, { conversationId, runId, message, state, events, context, at }),
      );
    },

    receiveMessage({ keys, surface, runId, message, state, audit: events, context }) {
      const at = clock.now();
      return db.write(function* () {
        for (const key of keys) {
          const fresh = yield* count(sql`insert into processed_events (key, created_at) values (${key}, ${at})
            on conflict do nothing`);
          if (fresh === 0) return { kind: 'duplicate' as const };
        }
        yield* count(sql`insert into conversations (id, team_id, enterprise_id, channel_id, thread_ts, surface,
            created_at)
          values (${ctx.newId('conv')}, ${message.teamId}, ${message.enterpriseId ?? null}, ${message.channelId},
            ${message.threadTs}, ${surface}, ${at}) on conflict (team_id, channel_id, thread_ts) do nothing`);
        const conversationId = yield* conversationIdOf(message);
        if (!conversationId) throw new AppError('database.not_stored', 'Conversation could not be created');
        const kind = yield* startOrQueue(ctx, {
          conversationId,
          runId,
          message,
          state,
          events: events(conversationId),
          context,
          at,
        });
        return { kind, conversationId };
      });
    },

    startNextQueuedRun({ conversationId, runId, state, audit: events }) {
      const at = clock.now();
      return db.write(function* () {
        yield* lockConversation(ctx, conversationId);
        if (yield* activeRunStatus(conversationId)) return undefined;
        const next = yield* row(sql`select * from queued_messages where conversation_id = ${conversationId}
          order by id limit 1`);
        if (!next) return undefined;
        const message = {
          id: readNumber(next, 'id'),
          userId: readString(next, 'user_id'),
          text: readString(next, 'text'),
          messageTs: readString(next, 'message_ts'),
        };
        yield* count(sql`delete from queued_messages where id = ${message.id}`);
        yield* insertRun(ctx, { conversationId, runId, requesterId: message.userId, state, at });
        yield* insertItems(conversationId, runId, 0, [userItem(message)], at);
        yield* audit(events(message));
        return message;
      });
    },

    requestStop({ thread, userId }) {
      const at = clock.now();
      return db.write(() => recordStop(ctx, thread, userId, at));
    },

    starter: (thread) =>
      db.read(function* () {
        const conversationId = yield* conversationIdOf(thread);
        if (!conversationId) return undefined;
        const first = yield* row(sql`select requester_id from runs where conversation_id = ${conversationId}
          order by created_at, id limit 1`);
        return first ? { conversationId, userId: readString(first, 'requester_id') } : undefined;
      }),

    recordAudit: (events) => db.write(() => audit(events)),
  };
}

/** Records a stop request on the thread's active run, as `stopEffect` says (the rule lives in the core). */
function* recordStop(
  ctx: StoreContext,
  thread: ThreadRef,
  userId: string,
  at: number,
): Program<StopRecorded> {
  const conversationId = yield* conversationIdOf(thread);
  if (!conversationId) return { kind: 'no_run' };
  const active = yield* row(sql`select id, status, stop_requested_by, stop_requested_at from runs
    where conversation_id = ${conversationId} and status in ('running', 'paused') ${ctx.db.dialect.forUpdate}`);
  if (!active) return { kind: 'no_run' };
  const runId = readString(active, 'id');
  const by = readOptionalString(active, 'stop_requested_by');
  const recordedAt = readOptionalNumber(active, 'stop_requested_at');
  const recorded = by === null || recordedAt === null ? undefined : { by, at: recordedAt };
  const status = readString(active, 'status') === 'paused' ? 'paused' : 'running';
  const { kept, takeOver } = stopEffect(status, recorded, { by: userId, at });
  yield* count(sql`update runs set stop_requested_by = ${kept.by}, stop_requested_at = ${kept.at}
    where id = ${runId}`);
  if (!takeOver) return { kind: 'running', runId, conversationId };
  yield* count(sql`update runs set status = 'running', ${claimColumns(ctx, at)}, updated_at = ${at}
    where id = ${runId} and status = 'paused'`);
  return { kind: 'claimed', runId, conversationId };
}

function* conversationIdOf(thread: ThreadRef): Program<string | undefined> {
  const found = yield* row(sql`select id from conversations where team_id = ${thread.teamId}
    and channel_id = ${thread.channelId} and thread_ts = ${thread.threadTs}`);
  return found ? readString(found, 'id') : undefined;
}

/** Starts the run (leased to this process) unless the conversation has an active run; else queues the message. */
function* startOrQueue(
  ctx: StoreContext,
  input: {
    conversationId: string;
    runId: string;
    message: IncomingMessage;
    state: RunState;
    events: AuditInput[];
    context: HistoryItem | undefined;
    at: number;
  },
): Program<'started' | 'queued' | 'queued_behind_approval'> {
  const { conversationId, runId, message, state, events, context, at } = input;
  yield* lockConversation(ctx, conversationId);
  const active = yield* activeRunStatus(conversationId);
  if (active) {
    yield* count(sql`insert into queued_messages (conversation_id, user_id, text, message_ts, created_at)
      values (${conversationId}, ${message.userId}, ${message.text}, ${message.messageTs}, ${at})`);
    return active === 'paused' ? 'queued_behind_approval' : 'queued';
  }
  yield* insertRun(ctx, { conversationId, runId, requesterId: message.userId, state, at });
  if (context && !(yield* hasHistory(conversationId))) {
    yield* insertItems(conversationId, null, null, [context], at);
  }
  yield* insertItems(conversationId, runId, 0, [userItem(message)], at);
  yield* audit(events);
  return 'started';
}

/**
 * Holds the conversation until the transaction ends, so two processes deciding at once whether it has an
 * active run take turns (the unique index on active runs backs this up).
 */
function* lockConversation(ctx: StoreContext, conversationId: string): Program<void> {
  const found = yield* row(
    sql`select id from conversations where id = ${conversationId} ${ctx.db.dialect.forUpdate}`,
  );
  if (!found) throw new AppError('conversation.not_found', `Conversation ${conversationId} not found`);
}

function* hasHistory(conversationId: string): Program<boolean> {
  return (
    (yield* row(sql`select id from conversation_items where conversation_id = ${conversationId} limit 1`)) !==
    undefined
  );
}

function userItem(message: { userId: string; text: string; messageTs: string }): HistoryItem {
  return {
    kind: 'user_message',
    data: { text: message.text, userId: message.userId, messageTs: message.messageTs },
  };
}
