import { type SQL, sql } from 'drizzle-orm';
import type { AuditInput } from '../audit/audit-event.js';
import { CHAIN_VERSION, GENESIS_HASH, hashEventV2, payloadDigest } from '../audit/hash-chain.js';
import { readNumber, readString } from './sql/columns.js';
import { count, forwardSteps, type Program, row } from './sql/program.js';
import type { Dialect } from './sql/sql-database.js';

/**
 * Rows of one insert: 14 parameters each, well under the parameters a statement may carry on either engine
 * (32,766 on SQLite, 65,535 on PostgreSQL).
 */
export const EVENTS_PER_INSERT = 500;

/**
 * Chains events onto the audit log: locks the head (across processes, in PostgreSQL), reads it and appends.
 * The engines run it last in every write transaction, so the log and the change it records commit together
 * and the head is always the last lock a transaction takes.
 */
export function* appendAudit(dialect: Dialect, events: readonly AuditInput[]): Program<void> {
  if (events.length === 0) return;
  if (dialect.lockAuditHead) yield* row(dialect.lockAuditHead);
  const head = yield* row(sql`select seq, hash from audit_events order by seq desc limit 1`);
  let seq = head ? readNumber(head, 'seq') : 0;
  let prevHash = head ? readString(head, 'hash') : GENESIS_HASH;
  const values: SQL[] = [];
  for (const event of events) {
    seq += 1;
    const { payload, ...fields } = event;
    const digest = payloadDigest(payload);
    const hash = hashEventV2(prevHash, seq, { ...fields, payloadDigest: digest });
    values.push(sql`(${seq}, ${event.at}, ${event.actor}, ${event.kind}, ${event.teamId}, ${event.enterpriseId}, ${event.conversationId},
        ${event.runId}, ${event.approvalId}, ${JSON.stringify(payload)}, ${prevHash}, ${hash}, ${CHAIN_VERSION},
        ${digest})`);
    prevHash = hash;
  }
  // One statement per batch of rows, not one per event: the head is held for fewer round trips.
  for (let from = 0; from < values.length; from += EVENTS_PER_INSERT)
    yield* count(sql`insert into audit_events
      (seq, at, actor, kind, team_id, enterprise_id, conversation_id, run_id, approval_id, payload, prev_hash, hash,
        chain_version, payload_digest)
      values ${sql.join(values.slice(from, from + EVENTS_PER_INSERT), sql`, `)}`);
}

/**
 * A write program as the engines run it: the audit events it records along the way are held back and chained
 * when it has finished its own work.
 */
export function* withAuditLast<T>(dialect: Dialect, program: Program<T>): Program<T> {
  const events: AuditInput[] = [];
  const result = yield* forwardSteps(program, (step) => {
    if (step.op !== 'audit') return true;
    events.push(...step.events);
    return false;
  });
  yield* appendAudit(dialect, events);
  return result;
}
