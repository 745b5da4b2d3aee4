import { sql } from 'drizzle-orm';
import { index, integer, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core';
import { HISTORY_ITEM_KINDS } from '../../agent/history.js';
import { RUN_STATUSES } from '../../agent/ports.js';
import { DELIVERY_KINDS } from '../../conversations/delivery.js';
import { SURFACES } from '../../surfaces.js';
import { createdAt, millis } from './columns.js';

/**
 * Every table of the SQLite database, read by drizzle-kit (`npm run db:generate`) as this one module: the
 * conversation and run tables here, the approval and audit tables in their own files.
 */
export * from './approval-tables.js';
export * from './audit-tables.js';

/** One per Slack thread (or terminal thread): the unit of history and of serialised work. */
export const conversations = sqliteTable(
  'conversations',
  {
    id: text('id').primaryKey(),
    teamId: text('team_id').notNull(),
    channelId: text('channel_id').notNull(),
    threadTs: text('thread_ts').notNull(),
    /** Who serves the conversation: the Slack bot, or `npm run chat` (whose threads Slack cannot reach). */
    surface: text('surface', { enum: SURFACES }).notNull().default('slack'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('conversations_thread').on(t.teamId, t.channelId, t.threadTs)],
);

/** Append-only history: user messages, assistant messages, tool calls and tool outputs, in order. */
export const conversationItems = sqliteTable(
  'conversation_items',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
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

export const runs = sqliteTable(
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
    leaseUntil: integer('lease_until'),
    /**
     * Who asked to stop the run (Slack's stop button), and when: the process driving the run honours it before
     * anything more executes; never set back.
     */
    stopRequestedBy: text('stop_requested_by'),
    stopRequestedAt: integer('stop_requested_at'),
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
export const deliveries = sqliteTable(
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
    leaseUntil: integer('lease_until'),
    /** 1 once the thread was told that the card could not be posted, so it is told once. */
    noticed: integer('noticed').notNull().default(0),
    createdAt: createdAt(),
  },
  (t) => [index('deliveries_due').on(t.dueAt)],
);

/** Keys of Slack deliveries already handled (event ids and team/channel/ts), for dedupe across retries. */
export const processedEvents = sqliteTable('processed_events', {
  key: text('key').primaryKey(),
  createdAt: createdAt(),
});

/**
 * Requests from Slack that change something, each accepted once (see src/approvals/click-inbox.ts): an event's
 * id, or a digest of a signed request's timestamp and signature, kept past Slack's 5-minute window. An Approve
 * click's row also holds the click, committed before its ack and leased until it is decided.
 */
export const acceptedRequests = sqliteTable(
  'accepted_requests',
  {
    key: text('key').primaryKey(),
    acceptedAt: millis('accepted_at'),
    /** The click, as JSON; null for any other request. */
    click: text('click'),
    leaseOwner: text('lease_owner'),
    leaseUntil: integer('lease_until'),
    decidedAt: integer('decided_at'),
  },
  (t) => [
    index('accepted_requests_accepted').on(t.acceptedAt),
    index('accepted_requests_leased').on(t.leaseUntil).where(sql`${t.leaseOwner} is not null`),
  ],
);

/** Messages that arrived while the conversation's run waited for a decision; answered in order after it. */
export const queuedMessages = sqliteTable(
  'queued_messages',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    conversationId: text('conversation_id').notNull(),
    userId: text('user_id').notNull(),
    text: text('text').notNull(),
    messageTs: text('message_ts').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('queued_messages_conversation').on(t.conversationId, t.id)],
);

/** Data of the built-in note tools. */
export const notes = sqliteTable(
  'notes',
  {
    id: integer('id').primaryKey({ autoIncrement: true }),
    teamId: text('team_id').notNull(),
    text: text('text').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('notes_team').on(t.teamId)],
);

/** People who opened the app's Home tab: their views are refreshed when a request that concerns them changes. */
export const homeViewers = sqliteTable(
  'home_viewers',
  {
    teamId: text('team_id').notNull(),
    userId: text('user_id').notNull(),
    /** 1 when the viewer saw the admins' view (every request of the workspace). */
    auditor: integer('auditor').notNull(),
    openedAt: millis('opened_at'),
  },
  (t) => [uniqueIndex('home_viewers_user').on(t.teamId, t.userId)],
);

/** People the bot has greeted in its Messages tab: one row each, so nobody is greeted twice. */
export const greetedUsers = sqliteTable(
  'greeted_users',
  {
    teamId: text('team_id').notNull(),
    userId: text('user_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('greeted_users_user').on(t.teamId, t.userId)],
);
