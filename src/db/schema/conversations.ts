import { sql } from 'drizzle-orm';
import { HISTORY_ITEM_KINDS } from '../../agent/history.js';
import { RUN_STATUSES } from '../../agent/ports.js';
import { DELIVERY_KINDS } from '../../conversations/delivery.js';
import { SURFACES } from '../../surfaces.js';
import { createdAt, integer, millis, serialId, text, time } from './columns.js';
import { index, table, uniqueIndex } from './table.js';

/** One per Slack thread (or terminal thread): the unit of history and of serialised work. */
export const conversations = table(
  'conversations',
  {
    id: text('id').primaryKey(),
    teamId: text('team_id').notNull(),
    /**
     * The Enterprise Grid organisation Slack named with the thread's first message (null outside Grid): its
     * org-wide install answers for the team's.
     */
    enterpriseId: text('enterprise_id'),
    channelId: text('channel_id').notNull(),
    threadTs: text('thread_ts').notNull(),
    /** Who serves the conversation: the Slack bot, or `npm run chat` (whose threads Slack cannot reach). */
    surface: text('surface', { enum: SURFACES }).notNull().default('slack'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('conversations_thread').on(t.teamId, t.channelId, t.threadTs)],
);

/** Append-only history: user messages, assistant messages, tool calls and tool outputs, in order. */
export const conversationItems = table(
  'conversation_items',
  {
    id: serialId(),
    conversationId: text('conversation_id').notNull(),
    runId: text('run_id'),
    turn: integer('turn'),
    kind: text('kind', { enum: HISTORY_ITEM_KINDS }).notNull(),
    /** JSON of the item's fields, validated by the history schema on read. */
    data: text('data').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('conversation_items_conversation').on(t.conversationId, t.id)],
);

export const runs = table(
  'runs',
  {
    id: text('id').primaryKey(),
    conversationId: text('conversation_id').notNull(),
    status: text('status', { enum: RUN_STATUSES }).notNull(),
    /** The serialised run state (see src/agent/run-state.ts); never the history itself. */
    state: text('state').notNull(),
    schemaVersion: integer('schema_version').notNull(),
    turn: integer('turn').notNull(),
    requesterId: text('requester_id').notNull(),
    /** Why a run failed or was cancelled, in one sentence. */
    error: text('error'),
    /** The process driving the run, while it is `running`; it renews `leaseUntil` as it goes. */
    leaseOwner: text('lease_owner'),
    /**
     * New at every claim of the run: the process's driver carries it and every write of the run checks it, so a
     * driver that stalled past its lease writes nothing even if its process holds the run again later.
     */
    leaseToken: text('lease_token'),
    /** After this (epoch ms) any process may take the running run over. */
    leaseUntil: time('lease_until'),
    /**
     * Who asked to stop the run (Slack's stop button), and when: the process driving the run honours it before
     * anything more executes; never set back.
     */
    stopRequestedBy: text('stop_requested_by'),
    stopRequestedAt: time('stop_requested_at'),
    createdAt: createdAt(),
    updatedAt: millis('updated_at'),
  },
  (t) => [
    index('runs_conversation_status').on(t.conversationId, t.status),
    index('runs_status').on(t.status),
    // Recovery looks for the leases held now, on every process, every few seconds.
    index('runs_leased').on(t.leaseUntil).where(sql`${t.leaseOwner} is not null`),
    // At most one active run per conversation, whatever the number of processes.
    uniqueIndex('runs_one_active').on(t.conversationId).where(sql`${t.status} in ('running', 'paused')`),
  ],
);

/**
 * What the bot owes a thread until Slack accepts it: an approval card, or a run's last message. Kept until
 * posted; a failing delivery is tried again later and later; a process takes one with a lease.
 */
export const deliveries = table(
  'deliveries',
  {
    /** `card:<approval id>`, `reply:<run id>` or `update:<approval id>` (a card update Slack refused). */
    id: text('id').primaryKey(),
    kind: text('kind', { enum: DELIVERY_KINDS }).notNull(),
    conversationId: text('conversation_id').notNull(),
    approvalId: text('approval_id'),
    runId: text('run_id'),
    /** The reply still owed (for a streamed answer, the part Slack has not shown); a card update: its `CardUpdate` (JSON). */
    text: text('text'),
    attempts: integer('attempts').notNull().default(0),
    dueAt: millis('due_at'),
    leaseOwner: text('lease_owner'),
    leaseUntil: time('lease_until'),
    /** 1 once the thread was told that the card could not be posted, so it is told once. */
    noticed: integer('noticed').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [index('deliveries_due').on(t.dueAt)],
);

/** Messages that arrived while the conversation's run waited for a decision; answered in order after it. */
export const queuedMessages = table(
  'queued_messages',
  {
    id: serialId(),
    conversationId: text('conversation_id').notNull(),
    userId: text('user_id').notNull(),
    text: text('text').notNull(),
    messageTs: text('message_ts').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('queued_messages_conversation').on(t.conversationId, t.id)],
);
