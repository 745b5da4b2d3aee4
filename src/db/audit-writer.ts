import { sql } from 'drizzle-orm';
import type { AuditInput } from '../audit/audit-event.js';
import { CHAIN_VERSION, GENESIS_HASH, hashEventV2, payloadDigest } from '../audit/hash-chain.js';
import { readNumber, readString } from './sql/columns.js';
import { count, forwardSteps, type Program, row } from './sql/program.js';
import type { Dialect } from './sql/sql-database.js';

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
  for (const event of events) {
    seq += 1;
    const { payload, ...fields } = event;
    const digest = payloadDigest(payload);
    const hash = hashEventV2(prevHash, seq, { ...fields, payloadDigest: digest });
    yield* count(sql`insert into audit_events
      (seq, at, actor, kind, team_id, conversation_id, run_id, approval_id, payload, prev_hash, hash,
        chain_version, payload_digest)
      values (${seq}, ${event.at}, ${event.actor}, ${event.kind}, ${event.teamId}, ${event.conversationId},
        ${event.runId}, ${event.approvalId}, ${JSON.stringify(payload)}, ${prevHash}, ${hash}, ${CHAIN_VERSION},
        ${digest})`);
    prevHash = hash;
  }
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
