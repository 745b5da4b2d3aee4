import { sql } from 'drizzle-orm';
import type { AuditInput } from '../src/audit/audit-event.js';
import { CHAIN_VERSION, GENESIS_HASH, hashEventV2, payloadDigest } from '../src/audit/hash-chain.js';
import { readNumber, readString } from '../src/db/sql/columns.js';
import { count, type Program, row } from '../src/db/sql/program.js';
import type { SqlDatabase } from '../src/db/sql/sql-database.js';

/** One request to write: its conversation, its row, the decider's vote, and the audit events of its story. */
export interface BulkRequest {
  conversation: Record<string, unknown>;
  approval: Record<string, unknown>;
  vote: Record<string, unknown> | null;
  events: AuditInput[];
}

/** Rows per insert statement. */
const ROWS_PER_STATEMENT = 1_000;
/** Audit events per transaction: a large one, so a million events are a hundred commits. */
const EVENTS_PER_TRANSACTION = 10_000;

/**
 * A value as an SQL literal both engines read alike: building a million bound parameters through drizzle took
 * most of the seeding time. Only the bench's own values pass here (integers, plain text, null).
 */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  if (typeof value === 'string') return `'${value.replaceAll("'", "''")}'`;
  throw new TypeError(`not a seed value: ${String(value)}`);
}

/** `insert into table (columns) values (…), (…)` of `records`, each holding every column (by name). */
function* insertRows(table: string, records: readonly Record<string, unknown>[]): Program<void> {
  const first = records[0];
  if (!first) return;
  const columns = Object.keys(first);
  for (let i = 0; i < records.length; i += ROWS_PER_STATEMENT) {
    const values = records
      .slice(i, i + ROWS_PER_STATEMENT)
      .map((record) => `(${columns.map((column) => literal(record[column])).join(', ')})`);
    yield* count(sql.raw(`insert into ${table} (${columns.join(', ')}) values ${values.join(', ')}`));
  }
}

/**
 * Writes the requests in large transactions, the audit events chained in memory onto the log's head with the
 * same hashes `appendAudit` (src/db/audit-writer.ts) computes, so `npm run audit -- verify` accepts the chain;
 * rows go in by multi-row statements. For benchmarks only: the bot appends one event at a time, as it happens.
 * Returns the events written.
 */
export async function writeBulk(db: SqlDatabase, requests: Iterable<BulkRequest>): Promise<number> {
  let batch: BulkRequest[] = [];
  let pending = 0;
  let written = 0;
  const flush = async () => {
    const chunk = batch;
    batch = [];
    pending = 0;
    await db.write(function* () {
      yield* insertRows(
        'conversations',
        chunk.map((r) => r.conversation),
      );
      yield* insertRows(
        'approvals',
        chunk.map((r) => r.approval),
      );
      yield* insertRows(
        'approval_votes',
        chunk.flatMap((r) => (r.vote ? [r.vote] : [])),
      );
      if (db.dialect.lockAuditHead) yield* row(db.dialect.lockAuditHead);
      const head = yield* row(sql`select seq, hash from audit_events order by seq desc limit 1`);
      let seq = head ? readNumber(head, 'seq') : 0;
      let prevHash = head ? readString(head, 'hash') : GENESIS_HASH;
      const events = chunk.flatMap((r) => r.events);
      yield* insertRows(
        'audit_events',
        events.map((event) => {
          seq += 1;
          const { payload, ...fields } = event;
          const digest = payloadDigest(payload);
          const hash = hashEventV2(prevHash, seq, { ...fields, payloadDigest: digest });
          const record = {
            seq,
            at: event.at,
            actor: event.actor,
            kind: event.kind,
            team_id: event.teamId,
            conversation_id: event.conversationId,
            run_id: event.runId,
            approval_id: event.approvalId,
            payload: JSON.stringify(payload),
            prev_hash: prevHash,
            hash,
            chain_version: CHAIN_VERSION,
            payload_digest: digest,
          };
          prevHash = hash;
          return record;
        }),
      );
    });
  };
  for (const r of requests) {
    batch.push(r);
    pending += r.events.length;
    written += r.events.length;
    if (pending >= EVENTS_PER_TRANSACTION) await flush();
  }
  if (batch.length > 0) await flush();
  return written;
}
