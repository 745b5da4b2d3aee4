import { sql } from 'drizzle-orm';
import { bigint, bigserial, index, integer, pgTable, text, uniqueIndex } from 'drizzle-orm/pg-core';
import { HISTORY_ITEM_KINDS } from '../../agent/history.js';
import { RUN_STATUSES } from '../../agent/ports.js';
import { APPROVAL_STATUSES } from '../../approvals/approval.js';
import { DELIVERY_KINDS } from '../../conversations/delivery.js';
import { SURFACES } from '../../surfaces.js';

/**
 * Milliseconds since the epoch, as in the SQLite schema (src/db/sqlite/schema.ts, which this one mirrors
 * table by table): `bigint`, read back as a JavaScript number.
 */
const time = (name: string) => bigint(name, { mode: 'number' });
const millis = (name: string) => time(name).notNull();
const createdAt = () => millis('created_at');

/** One per Slack thread (or terminal thread): the unit of history and of serialised work. */
export const conversations = pgTable(
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
export const conversationItems = pgTable(
  'conversation_items',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
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

export const runs = pgTable(
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
export const deliveries = pgTable(
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

/** One row per gated tool call. */
export const approvals = pgTable(
  'approvals',
  {
    id: text('id').primaryKey(),
    runId: text('run_id').notNull(),
    conversationId: text('conversation_id').notNull(),
    teamId: text('team_id').notNull(),
    /** The model turn that produced the call; all approvals of one paused turn share it. */
    turn: integer('turn').notNull(),
    callId: text('call_id').notNull(),
    toolName: text('tool_name').notNull(),
    /** The arguments exactly as the model sent them. */
    arguments: text('arguments').notNull(),
    argumentsHash: text('arguments_hash').notNull(),
    /** Arguments as edited by a person before approval, when they were. */
    editedArguments: text('edited_arguments'),
    /**
     * Set when the decision was automatic: the approval whose "Approve for this thread" covered this call.
     * Null for decisions a person made on this request itself.
     */
    originApprovalId: text('origin_approval_id'),
    status: text('status', { enum: APPROVAL_STATUSES }).notNull(),
    requesterId: text('requester_id').notNull(),
    /** The policy rule that applied, as JSON, so later policy changes do not rewrite history. */
    rule: text('rule').notNull(),
    decidedBy: text('decided_by'),
    decidedAt: time('decided_at'),
    reason: text('reason'),
    channelId: text('channel_id').notNull(),
    threadTs: text('thread_ts').notNull(),
    messageTs: text('message_ts'),
    result: text('result'),
    expiresAt: time('expires_at'),
    remindAt: time('remind_at'),
    createdAt: createdAt(),
    updatedAt: millis('updated_at'),
  },
  (t) => [
    uniqueIndex('approvals_run_call').on(t.runId, t.callId),
    index('approvals_status').on(t.status),
    index('approvals_run_turn').on(t.runId, t.turn),
  ],
);

/**
 * "Approve for this thread": later calls of `toolName` in the conversation are approved automatically, until
 * revoked. Granted by the decision on `originApprovalId`.
 */
export const standingApprovals = pgTable(
  'standing_approvals',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    conversationId: text('conversation_id').notNull(),
    toolName: text('tool_name').notNull(),
    grantedBy: text('granted_by').notNull(),
    originApprovalId: text('origin_approval_id').notNull(),
    grantedAt: millis('granted_at'),
    revokedAt: time('revoked_at'),
  },
  (t) => [index('standing_approvals_conversation_tool').on(t.conversationId, t.toolName)],
);

/** Individual votes, for quorum: one per person per approval. */
export const approvalVotes = pgTable(
  'approval_votes',
  {
    approvalId: text('approval_id').notNull(),
    userId: text('user_id').notNull(),
    vote: text('vote', { enum: ['approve', 'reject'] }).notNull(),
    /** Set when the vote was cast through a delegation: the person who delegated. */
    onBehalfOf: text('on_behalf_of'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('approval_votes_user').on(t.approvalId, t.userId)],
);

/** `/approvals delegate @bob until:…`: Bob may decide what the delegator may decide, until then. */
export const delegations = pgTable(
  'delegations',
  {
    id: text('id').primaryKey(),
    teamId: text('team_id').notNull(),
    delegatorId: text('delegator_id').notNull(),
    delegateId: text('delegate_id').notNull(),
    /** Milliseconds: the delegation ends then (the end of the day it names, UTC). */
    until: millis('until'),
    createdAt: createdAt(),
    endedAt: time('ended_at'),
    endedBy: text('ended_by'),
  },
  (t) => [index('delegations_delegate').on(t.teamId, t.delegateId)],
);

/** Copies of an approval card outside the conversation's thread (the rule's approval channel). */
export const approvalCards = pgTable(
  'approval_cards',
  {
    approvalId: text('approval_id').notNull(),
    channelId: text('channel_id').notNull(),
    messageTs: text('message_ts').notNull(),
    /** Permalink to the conversation's thread, shown on the copy. */
    link: text('link'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('approval_cards_message').on(t.approvalId, t.channelId, t.messageTs)],
);

/** Append-only, hash-chained. Nothing updates or deletes these rows. */
export const auditEvents = pgTable(
  'audit_events',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey(),
    at: millis('at'),
    actor: text('actor').notNull(),
    kind: text('kind').notNull(),
    teamId: text('team_id'),
    conversationId: text('conversation_id'),
    runId: text('run_id'),
    approvalId: text('approval_id'),
    payload: text('payload').notNull(),
    prevHash: text('prev_hash').notNull(),
    hash: text('hash').notNull(),
    /**
     * 1: the hash covers the payload itself (events written before retention existed). 2: it covers
     * `payload_digest`, so content in the payload can be replaced by its digest (pruned) and still verify.
     */
    chainVersion: integer('chain_version').notNull().default(1),
    /** Version 2: the digest of the payload (src/audit/hash-chain.ts). */
    payloadDigest: text('payload_digest'),
  },
  (t) => [
    index('audit_events_approval').on(t.approvalId),
    index('audit_events_at').on(t.at),
    // A run's events, for usage reports (who started it, which tools it called).
    index('audit_events_run').on(t.runId),
  ],
);

/**
 * How far each destination of the audit log has acknowledged it (`webhook`: the SIEM of AUDIT_WEBHOOK_URL):
 * the last sequence number it accepted, and the process pushing to it now (one at a time, with a lease).
 */
export const auditCursors = pgTable('audit_cursors', {
  name: text('name').primaryKey(),
  ackedSeq: bigint('acked_seq', { mode: 'number' }).notNull().default(0),
  ackedAt: time('acked_at'),
  /** Failed attempts since the last acknowledgement, and the last failure, for /healthz and the logs. */
  attempts: integer('attempts').notNull().default(0),
  lastError: text('last_error'),
  leaseOwner: text('lease_owner'),
  leaseUntil: time('lease_until'),
  updatedAt: millis('updated_at'),
});

/**
 * Signed statements of the chain's head (AUDIT_SIGNING_KEY): event `seq` had hash `hash`. A log cut after a
 * checkpoint, or re-chained from an edited event, contradicts it. Rows are added, and changed only to record
 * where they were posted.
 */
export const auditCheckpoints = pgTable('audit_checkpoints', {
  seq: bigint('seq', { mode: 'number' }).primaryKey(),
  hash: text('hash').notNull(),
  at: millis('at'),
  /** The first 16 hex digits of the SHA-256 of the public key (SPKI DER). */
  keyId: text('key_id').notNull(),
  /** Base64 Ed25519 signature over the statement (src/audit/checkpoint.ts). */
  signature: text('signature').notNull(),
  /** Where it was posted (AUDIT_CHECKPOINT_CHANNEL), once Slack accepted it. */
  postedChannel: text('posted_channel'),
  postedTs: text('posted_ts'),
  postedAt: time('posted_at'),
});

/** Keys of Slack deliveries already handled (event ids and team/channel/ts), for dedupe across retries. */
export const processedEvents = pgTable('processed_events', {
  key: text('key').primaryKey(),
  createdAt: createdAt(),
});

/**
 * Requests from Slack that change something, each accepted once (see src/approvals/click-inbox.ts): an event's
 * id, or a digest of a signed request's timestamp and signature, kept past Slack's 5-minute window. An Approve
 * click's row also holds the click, committed before its ack and leased until it is decided.
 */
export const acceptedRequests = pgTable(
  'accepted_requests',
  {
    key: text('key').primaryKey(),
    acceptedAt: millis('accepted_at'),
    /** The click, as JSON; null for any other request. */
    click: text('click'),
    leaseOwner: text('lease_owner'),
    leaseUntil: time('lease_until'),
    decidedAt: time('decided_at'),
  },
  (t) => [
    index('accepted_requests_accepted').on(t.acceptedAt),
    index('accepted_requests_leased').on(t.leaseUntil).where(sql`${t.leaseOwner} is not null`),
  ],
);

/** Messages that arrived while the conversation's run waited for a decision; answered in order after it. */
export const queuedMessages = pgTable(
  'queued_messages',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    conversationId: text('conversation_id').notNull(),
    userId: text('user_id').notNull(),
    text: text('text').notNull(),
    messageTs: text('message_ts').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('queued_messages_conversation').on(t.conversationId, t.id)],
);

/** Data of the built-in note tools. */
export const notes = pgTable(
  'notes',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    teamId: text('team_id').notNull(),
    text: text('text').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('notes_team').on(t.teamId)],
);

/** People who opened the app's Home tab: their views are refreshed when a request that concerns them changes. */
export const homeViewers = pgTable(
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
export const greetedUsers = pgTable(
  'greeted_users',
  {
    teamId: text('team_id').notNull(),
    userId: text('user_id').notNull(),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('greeted_users_user').on(t.teamId, t.userId)],
);
