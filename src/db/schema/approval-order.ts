import { sql } from 'drizzle-orm';

/**
 * When a request left `pending`: its decision, expiry or break glass (`decided_at`), else its last change (a
 * request cancelled by a run that could not resume has no decider). The decided list is ordered by it, latest
 * first, through the index `approvals_team_decided`: the same expression in the index and in the queries, so
 * each engine matches them. Written without a comma (not `coalesce`), which drizzle-kit's SQLite migrations
 * would split into two columns.
 */
export const DECISION_TIME = sql`(case when decided_at is null then updated_at else decided_at end)`;

/** Requests that left `pending`: the partial index's condition, written the same in the queries it serves. */
export const NOT_PENDING = sql`status <> 'pending'`;
