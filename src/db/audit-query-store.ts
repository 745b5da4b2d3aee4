import { type SQL, sql } from 'drizzle-orm';
import { APPROVAL_STATUSES } from '../approvals/approval.js';
import {
  type ApprovalReports,
  type AuditEventRow,
  type AuditQueries,
  median,
} from '../approvals/audit-queries.js';
import type { StoredAuditEvent } from '../audit/audit-event.js';
import { usageTotals } from '../audit/usage.js';
import { toApprovalRecord } from './approval-rows.js';
import { readEnum, readNumber, readOptionalString, readString } from './sql/columns.js';
import { type Program, type Row, row, rows } from './sql/program.js';
import type { SqlDatabase } from './sql/sql-database.js';
import { readTrends } from './trend-queries.js';
import { readRunUsage } from './usage-queries.js';

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

const where = (conditions: (SQL | undefined)[]): SQL => {
  const present = conditions.filter((c): c is SQL => c !== undefined);
  return present.length === 0 ? sql`1 = 1` : sql.join(present, sql` and `);
};

/** Approvals live here until decided; the latest decision comes first in history. */
const DECISION_TIME = sql`coalesce(decided_at, updated_at)`;

export function createAuditQueryStore(db: SqlDatabase): AuditQueries {
  const eventTool = sql`coalesce(a.tool_name, ${db.dialect.jsonText(sql`e.payload`, 'tool')})`;
  function* approvalPage(condition: SQL, order: SQL, limit: number, offset: number) {
    const found = yield* rows(sql`select * from approvals where ${condition} order by ${order}
      limit ${limit} offset ${offset}`);
    const total = yield* row(sql`select count(*) as n from approvals where ${condition}`);
    return { items: found.map(toApprovalRecord), total: total ? readNumber(total, 'n') : 0 };
  }
  return {
    chain: () =>
      db.read(function* () {
        return (yield* rows(sql`select * from audit_events order by seq`)).map(toStoredEvent);
      }),

    events: (filter) =>
      db.read(function* () {
        const condition = where([
          filter.since === undefined ? undefined : sql`e.at >= ${filter.since}`,
          filter.until === undefined ? undefined : sql`e.at <= ${filter.until}`,
          filter.teamId === undefined ? undefined : sql`e.team_id = ${filter.teamId}`,
          filter.userId === undefined
            ? undefined
            : sql`(e.actor = ${filter.userId} or a.requester_id = ${filter.userId})`,
          filter.tool === undefined ? undefined : sql`${eventTool} = ${filter.tool}`,
          filter.status === undefined ? undefined : sql`a.status = ${filter.status}`,
        ]);
        const found = yield* rows(sql`select e.*, ${eventTool} as event_tool, a.status as approval_status
          from audit_events e left join approvals a on a.id = e.approval_id where ${condition} order by e.seq`);
        return found.map(
          (r): AuditEventRow => ({
            ...toStoredEvent(r),
            tool: readOptionalString(r, 'event_tool'),
            approvalStatus:
              r.approval_status === null ? null : readEnum(r, 'approval_status', APPROVAL_STATUSES),
          }),
        );
      }),

    pending: (teamId, { limit, offset }) =>
      db.read(() =>
        approvalPage(sql`team_id = ${teamId} and status = 'pending'`, sql`created_at, id`, limit, offset),
      ),

    history: ({ teamId, userId, tool, since, limit, offset }) =>
      db.read(() =>
        approvalPage(
          where([
            sql`team_id = ${teamId}`,
            sql`status <> 'pending'`,
            userId === undefined
              ? undefined
              : sql`(requester_id = ${userId} or exists (select 1 from approval_votes v
                  where v.approval_id = approvals.id and v.user_id = ${userId}))`,
            tool === undefined ? undefined : sql`tool_name = ${tool}`,
            since === undefined ? undefined : sql`created_at >= ${since}`,
          ]),
          sql`${DECISION_TIME} desc, id desc`,
          limit,
          offset,
        ),
      ),

    detail: (teamId, approvalId) =>
      db.read(function* () {
        const found = yield* row(
          sql`select * from approvals where id = ${approvalId} and team_id = ${teamId}`,
        );
        if (!found) return undefined;
        const votes = yield* rows(sql`select user_id, vote, created_at from approval_votes
          where approval_id = ${approvalId} order by created_at`);
        const events = yield* rows(
          sql`select * from audit_events where approval_id = ${approvalId} order by seq`,
        );
        return {
          approval: toApprovalRecord(found),
          votes: votes.map((v) => ({
            userId: readString(v, 'user_id'),
            vote: readEnum(v, 'vote', ['approve', 'reject'] as const),
            at: readNumber(v, 'created_at'),
          })),
          events: events.map(toStoredEvent),
        };
      }),

    stats: (teamId, since) =>
      db.read(function* (): Program<Awaited<ReturnType<ApprovalReports['stats']>>> {
        const scope = where([
          sql`team_id = ${teamId}`,
          since === undefined ? undefined : sql`created_at >= ${since}`,
        ]);
        const counts = yield* rows(sql`select tool_name, status, count(*) as n from approvals where ${scope}
          group by tool_name, status order by tool_name, status`);
        const waits = yield* rows(sql`select decided_at - created_at as wait from approvals
          where ${scope} and decided_at is not null`);
        const decided = waits.map((w) => readNumber(w, 'wait'));
        const usage = usageTotals(
          yield* readRunUsage(db.dialect, { teamId, ...(since === undefined ? {} : { since }) }),
        );
        return {
          counts: counts.map((c) => ({
            tool: readString(c, 'tool_name'),
            status: readEnum(c, 'status', APPROVAL_STATUSES),
            count: readNumber(c, 'n'),
          })),
          medianDecisionMs: median(decided),
          decided: decided.length,
          usage,
        };
      }),

    trends: (window) => db.read(() => readTrends(db.dialect, window)),

    requestsBy: (teamId, userId, limit) =>
      db.read(function* () {
        const found =
          yield* rows(sql`select * from approvals where team_id = ${teamId} and requester_id = ${userId}
          order by created_at desc, id desc limit ${limit}`);
        return found.map(toApprovalRecord);
      }),
  };
}
