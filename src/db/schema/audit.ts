import { bigInteger, integer, millis, text, time } from './columns.js';
import { index, table } from './table.js';

/** Append-only, hash-chained. Nothing updates or deletes these rows. */
export const auditEvents = table(
  'audit_events',
  {
    seq: bigInteger('seq').primaryKey(),
    at: millis('at'),
    actor: text('actor').notNull(),
    kind: text('kind').notNull(),
    teamId: text('team_id'),
    /** The Enterprise Grid organisation of the team, when it has one; hashed only when present. */
    enterpriseId: text('enterprise_id'),
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
    // A workspace's log newest first, a page at a time from a sequence number (the console's history).
    index('audit_events_team_seq').on(t.teamId, t.seq),
  ],
);

/**
 * How far each destination of the audit log has acknowledged it (`webhook`: the SIEM of AUDIT_WEBHOOK_URL):
 * the last sequence number it accepted, and the process pushing to it now (one at a time, with a lease).
 */
export const auditCursors = table('audit_cursors', {
  name: text('name').primaryKey(),
  ackedSeq: bigInteger('acked_seq').notNull().default(0),
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
export const auditCheckpoints = table('audit_checkpoints', {
  seq: bigInteger('seq').primaryKey(),
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
