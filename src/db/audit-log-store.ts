import { type SQL, sql } from 'drizzle-orm';
import { APPROVAL_STATUSES } from '../approvals/approval.js';
import type {
  AuditEventFilter,
  AuditEventRow,
  AuditLogQueries,
  AuditPageRequest,
} from '../approvals/audit-queries.js';
import type { StoredAuditEvent } from '../audit/audit-event.js';
import { toApprovalRecord } from './approval-rows.js';
import { readEnum, readNumber, readOptionalString, readString } from './sql/columns.js';
import { type Row, rows } from './sql/program.js';
import type { SqlDatabase } from './sql/sql-database.js';

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The stored payload as an object; anything else (a tampered row) is kept raw so verification flags it. */
export function toStoredEvent(r: Row): StoredAuditEvent {
  const raw = readString(r, 'payload');
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = undefined;
  }
  // A plain object check, not a full schema: the payload is opaque JSON and this runs once per event of the log.
  const payload = isRecord(parsed) ? parsed : { unreadable: raw };
  return {
    seq: readNumber(r, 'seq'),
    at: readNumber(r, 'at'),
    actor: readString(r, 'actor'),
    kind: readString(r, 'kind'),
    teamId: readOptionalString(r, 'team_id'),
    enterpriseId: r.enterprise_id === undefined ? null : readOptionalString(r, 'enterprise_id'),
    conversationId: readOptionalString(r, 'conversation_id'),
    runId: readOptionalString(r, 'run_id'),
    approvalId: readOptionalString(r, 'approval_id'),
    payload,
    prevHash: readString(r, 'prev_hash'),
    hash: readString(r, 'hash'),
    // Absent in a database the bot has not migrated since: every event there is version 1.
    version: r.chain_version === undefined ? 1 : readNumber(r, 'chain_version'),
    payloadDigest: r.payload_digest === undefined ? null : readOptionalString(r, 'payload_digest'),
  };
}

/** Conditions joined by `and`; none is true. */
export const where = (conditions: (SQL | undefined)[]): SQL => {
  const present = conditions.filter((c): c is SQL => c !== undefined);
  return present.length === 0 ? sql`1 = 1` : sql.join(present, sql` and `);
};

function toEventRow(r: Row): AuditEventRow {
  return {
    ...toStoredEvent(r),
    tool: readOptionalString(r, 'event_tool'),
    approvalStatus: r.approval_status === null ? null : readEnum(r, 'approval_status', APPROVAL_STATUSES),
  };
}

/**
 * The audit log's own queries: the chain, the filtered events of `npm run audit -- list|export`, and the
 * console's pages of them, all with one reading of a filter.
 */
export function createAuditLogQueries(db: SqlDatabase): AuditLogQueries {
  const eventTool = sql`coalesce(a.tool_name, ${db.dialect.jsonText(sql`e.payload`, 'tool')})`;
  const select = sql`select e.*, ${eventTool} as event_tool, a.status as approval_status
    from audit_events e left join approvals a on a.id = e.approval_id`;

  function conditionOf(filter: AuditEventFilter): SQL {
    const { since, until, teamId, enterpriseId, userId, tool, status, channel, kind, text } = filter;
    return where([
      since === undefined ? undefined : sql`e.at >= ${since}`,
      until === undefined ? undefined : sql`e.at <= ${until}`,
      teamId === undefined ? undefined : sql`e.team_id = ${teamId}`,
      enterpriseId === undefined ? undefined : sql`e.enterprise_id = ${enterpriseId}`,
      userId === undefined ? undefined : sql`(e.actor = ${userId} or a.requester_id = ${userId})`,
      tool === undefined ? undefined : sql`${eventTool} = ${tool}`,
      status === undefined ? undefined : sql`a.status = ${status}`,
      channel === undefined
        ? undefined
        : sql`coalesce((select c.channel_id from conversations c where c.id = e.conversation_id),
            a.channel_id) = ${channel}`,
      kind === undefined ? undefined : sql`e.kind = ${kind}`,
      text === undefined ? undefined : db.dialect.containsText(sql`e.payload`, text),
    ]);
  }

  /** A page of the events that pass `filter`, by sequence number (one more read tells whether another follows). */
  const page = (filter: AuditEventFilter, { limit, order, cursor }: AuditPageRequest) =>
    db.read(function* () {
      const newest = order === 'newest';
      const past =
        cursor === undefined ? undefined : newest ? sql`e.seq < ${cursor}` : sql`e.seq > ${cursor}`;
      // One more than asked tells whether another page follows, without counting the whole log.
      const found = yield* rows(sql`${select} where ${where([conditionOf(filter), past])}
        order by e.seq ${newest ? sql`desc` : sql`asc`} limit ${limit + 1}`);
      const items = found.slice(0, limit).map(toEventRow);
      const last = items.at(-1);
      return { items, nextCursor: found.length > limit && last ? last.seq : null };
    });

  return {
    chain: (range) =>
      db.read(function* () {
        const found = range
          ? yield* rows(
              sql`select * from audit_events where seq > ${range.afterSeq} order by seq limit ${range.limit}`,
            )
          : yield* rows(sql`select * from audit_events order by seq`);
        return found.map(toStoredEvent);
      }),

    events: (filter) =>
      db.read(function* () {
        return (yield* rows(sql`${select} where ${conditionOf(filter)} order by e.seq`)).map(toEventRow);
      }),

    eventPage: page,

    logPage: page,

    runTrail: (teamId, runId) =>
      db.read(function* () {
        const events = yield* rows(
          sql`${select} where e.team_id = ${teamId} and e.run_id = ${runId} order by e.seq`,
        );
        if (events.length === 0) return undefined;
        const approvals = yield* rows(sql`select * from approvals where team_id = ${teamId}
          and run_id = ${runId} order by created_at, id`);
        return { events: events.map(toEventRow), approvals: approvals.map(toApprovalRecord) };
      }),
  };
}
