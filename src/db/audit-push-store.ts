import { sql } from 'drizzle-orm';
import { APPROVAL_STATUSES } from '../approvals/approval.js';
import type { ExportRow } from '../audit/audit-export.js';
import type { AuditPushStore, PushClaim } from '../audit/audit-push.js';
import { toStoredEvent } from './audit-log-store.js';
import { leaseColumns, takableLease } from './run-rows.js';
import { readEnum, readNumber, readOptionalNumber, readOptionalString } from './sql/columns.js';
import { count, type Program, type Row, row, rows } from './sql/program.js';
import type { SqlDatabase } from './sql/sql-database.js';
import type { StoreContext } from './store-context.js';

/** Events after `afterSeq` in sequence order (at most `limit`), as `list --format jsonl` prints them. */
export function auditEventsAfter(db: SqlDatabase, afterSeq: number, limit: number): Promise<ExportRow[]> {
  const eventTool = sql`coalesce(a.tool_name, ${db.dialect.jsonText(sql`e.payload`, 'tool')})`;
  return db.read(function* () {
    const found = yield* rows(sql`select e.*, ${eventTool} as event_tool, a.status as approval_status
      from audit_events e left join approvals a on a.id = e.approval_id
      where e.seq > ${afterSeq} order by e.seq limit ${limit}`);
    return found.map(
      (r): ExportRow => ({
        ...toStoredEvent(r),
        tool: readOptionalString(r, 'event_tool'),
        approvalStatus: r.approval_status === null ? null : readEnum(r, 'approval_status', APPROVAL_STATUSES),
      }),
    );
  });
}

function* headSeq(): Program<number> {
  const head = yield* row(sql`select max(seq) as seq from audit_events`);
  return (head && readOptionalNumber(head, 'seq')) ?? 0;
}

/** When the first event after `seq` was written, if there is one. */
export function* firstEventAtAfter(seq: number): Program<number | undefined> {
  const found = yield* row(sql`select at from audit_events where seq > ${seq} order by seq limit 1`);
  return found ? readNumber(found, 'at') : undefined;
}

/** The sequence number of the newest event, 0 for an empty log. */
export function auditHeadSeq(db: SqlDatabase): Promise<number> {
  return db.read(headSeq);
}

function toClaim(r: Row | undefined): PushClaim | undefined {
  return r ? { ackedSeq: readNumber(r, 'acked_seq'), leaseUntil: readNumber(r, 'lease_until') } : undefined;
}

/** The cursors of the audit log's destinations (table `audit_cursors`), each leased to one process at a time. */
export function createAuditPushStore(ctx: StoreContext): AuditPushStore {
  const { db, clock } = ctx;
  return {
    claim: (sink) =>
      db.write(function* () {
        const at = clock.now();
        yield* count(sql`insert into audit_cursors (name, acked_seq, attempts, updated_at)
          values (${sink}, 0, 0, ${at}) on conflict do nothing`);
        const takable = yield* takableLease(ctx, 'audit_cursors', at, { mine: true });
        return toClaim(
          yield* row(sql`update audit_cursors set ${leaseColumns(ctx, at)}
            where name = ${sink} and ${takable} returning acked_seq, lease_until`),
        );
      }),

    after: (afterSeq, limit) => auditEventsAfter(db, afterSeq, limit),

    acknowledge: (sink, fromSeq, toSeq) =>
      db.write(function* () {
        const at = clock.now();
        return toClaim(
          yield* row(sql`update audit_cursors set acked_seq = ${toSeq}, acked_at = ${at}, attempts = 0,
            last_error = null, updated_at = ${at}, ${leaseColumns(ctx, at)}
            where name = ${sink} and lease_owner = ${ctx.owner} and acked_seq = ${fromSeq}
            returning acked_seq, lease_until`),
        );
      }),

    failed: (sink, error) =>
      db.write(function* () {
        yield* count(sql`update audit_cursors set attempts = attempts + 1, last_error = ${error.slice(0, 300)},
          updated_at = ${clock.now()} where name = ${sink} and lease_owner = ${ctx.owner}`);
      }),

    release: (sink) =>
      db.write(function* () {
        yield* count(sql`update audit_cursors set lease_owner = null, lease_until = null
          where name = ${sink} and lease_owner = ${ctx.owner}`);
      }),

    state: (sink) =>
      db.read(function* () {
        const cursor = yield* row(sql`select acked_seq, attempts, last_error from audit_cursors
          where name = ${sink}`);
        const ackedSeq = cursor ? readNumber(cursor, 'acked_seq') : 0;
        return {
          headSeq: yield* headSeq(),
          ackedSeq,
          oldestWaitingAt: (yield* firstEventAtAfter(ackedSeq)) ?? null,
          attempts: cursor ? readNumber(cursor, 'attempts') : 0,
          lastError: cursor ? readOptionalString(cursor, 'last_error') : null,
        };
      }),
  };
}
