import { type SQL, sql } from 'drizzle-orm';
import type { AuditQueries, DecidedQuery, PageRequest } from '../approvals/audit-queries.js';
import { bucketMedian } from '../approvals/wait-buckets.js';
import { toApprovalRecord } from './approval-rows.js';
import { createAuditLogQueries, toStoredEvent, where } from './audit-log-store.js';
import { DECISION_TIME, NOT_PENDING } from './schema/approval-order.js';
import { readEnum, readNumber, readString } from './sql/columns.js';
import { row, rows } from './sql/program.js';
import type { SqlDatabase } from './sql/sql-database.js';
import { readStats, readTrends } from './trend-queries.js';

export function createAuditQueryStore(db: SqlDatabase): AuditQueries {
  /** A page by offset, and how many match: counted, unless `count` reads it from elsewhere. */
  function* approvalPage(
    condition: SQL,
    order: SQL,
    { limit, offset }: PageRequest,
    count = sql`select count(*) as n from approvals where ${condition}`,
  ) {
    const found = yield* rows(sql`select * from approvals where ${condition} order by ${order}
      limit ${limit} offset ${offset}`);
    const total = yield* row(count);
    return { items: found.map(toApprovalRecord), total: total ? readNumber(total, 'n') : 0 };
  }
  return {
    ...createAuditLogQueries(db),

    pending: (teamId, page) =>
      db.read(() => approvalPage(sql`team_id = ${teamId} and status = 'pending'`, sql`created_at, id`, page)),

    history: ({ teamId, userId, tool, since, ...page }) =>
      db.read(() =>
        approvalPage(
          where([
            sql`team_id = ${teamId}`,
            NOT_PENDING,
            userId === undefined ? undefined : requestedOrVotedBy(userId),
            tool === undefined ? undefined : sql`tool_name = ${tool}`,
            since === undefined ? undefined : sql`created_at >= ${since}`,
          ]),
          sql`${DECISION_TIME} desc, id desc`,
          page,
          // A person's requests, or those since a moment (not a whole day), are counted.
          userId === undefined && since === undefined ? decidedTotal(teamId, tool) : undefined,
        ),
      ),

    decided: (query) =>
      db.read(function* () {
        const { teamId, userId, limit } = query;
        // One more than the page, to know whether another follows.
        const found = yield* rows(decidedPageQuery({ ...query, limit: limit + 1 }));
        // One person's by counting their requests.
        const total = yield* row(
          userId === undefined
            ? decidedTotal(teamId)
            : sql`select count(*) as n from approvals where ${decidedScope(teamId, userId)}`,
        );
        const items = found.slice(0, limit);
        const last = items.at(-1);
        return {
          items: items.map(toApprovalRecord),
          total: total ? readNumber(total, 'n') : 0,
          next:
            found.length > limit && last
              ? { at: readNumber(last, 'decision_time'), id: readString(last, 'id') }
              : null,
        };
      }),

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
      db.read(function* () {
        const { counts, waits, usage } = yield* readStats(teamId, since);
        return {
          counts,
          medianDecisionMs: bucketMedian(waits),
          decided: waits.reduce((sum, w) => sum + w.count, 0),
          usage,
        };
      }),

    trends: (window) => db.read(() => readTrends(window)),

    requestsBy: (teamId, userId, limit) =>
      db.read(function* () {
        const found =
          yield* rows(sql`select * from approvals where team_id = ${teamId} and requester_id = ${userId}
          order by created_at desc, id desc limit ${limit}`);
        return found.map(toApprovalRecord);
      }),
  };
}

/**
 * How many of a workspace's requests (of one tool, or all) left `pending`, from its daily totals: a few rows a
 * day, however many requests, where counting them grows with the log (docs/architecture.md, "Daily totals").
 */
function decidedTotal(teamId: string, tool?: string): SQL {
  return sql`select cast(coalesce(sum(requests), 0) as bigint) as n from approval_days
    where ${where([sql`team_id = ${teamId}`, NOT_PENDING, tool === undefined ? undefined : sql`tool_name = ${tool}`])}`;
}

/** Requests `userId` made or voted on. */
function requestedOrVotedBy(userId: string): SQL {
  return sql`(requester_id = ${userId} or exists (select 1 from approval_votes v
    where v.approval_id = approvals.id and v.user_id = ${userId}))`;
}

function decidedScope(teamId: string, userId: string | undefined): SQL {
  return where([
    sql`team_id = ${teamId}`,
    NOT_PENDING,
    userId === undefined ? undefined : requestedOrVotedBy(userId),
  ]);
}

/**
 * A page of a workspace's decided requests, latest decision first, past `after`: read in order from the index
 * `approvals_team_decided` (no sort, however deep the page), with each row's decision time.
 */
export function decidedPageQuery(query: DecidedQuery): SQL {
  const { teamId, userId, limit, after } = query;
  return sql`select *, ${DECISION_TIME} as decision_time from approvals
    where ${decidedScope(teamId, userId)}
    ${after ? sql`and (${DECISION_TIME}, id) < (${after.at}, ${after.id})` : sql``}
    order by ${DECISION_TIME} desc, id desc limit ${limit}`;
}
