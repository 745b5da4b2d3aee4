import { sql } from 'drizzle-orm';
import { APPROVAL_STATUSES } from '../approvals/approval.js';
import { DAY_MS, type TrendRows, type TrendWindow } from '../approvals/approval-trends.js';
import { readEnum, readNumber, readString } from './sql/columns.js';
import { type Program, rows } from './sql/program.js';
import type { Dialect } from './sql/sql-database.js';
import { readRunUsage } from './usage-queries.js';

/**
 * The UTC day number of an epoch-ms column: integer division on both engines (SQLite's integer `/`, PostgreSQL's
 * bigint `/`). The divisor is written into the SQL, so `group by` names the very expression that was selected.
 */
const dayOf = (column: string) => sql.raw(`(${column} / ${DAY_MS})`);

const DEADLINE_KINDS = ['approval.expired', 'approval.escalated'] as const;

/** The rows of the console's charts: grouped in SQL by day where both engines can, one workspace, one window. */
export function* readTrends(dialect: Dialect, window: TrendWindow): Program<TrendRows> {
  const made = sql`team_id = ${window.teamId} and created_at >= ${window.since} and created_at <= ${window.until}`;
  const byDay = yield* rows(sql`select ${dayOf('created_at')} as day, status, count(*) as n from approvals
    where ${made} group by ${dayOf('created_at')}, status`);
  const waits = yield* rows(sql`select tool_name, decided_at - created_at as wait from approvals
    where ${made} and decided_at is not null`);
  const tools = yield* rows(
    sql`select tool_name, count(*) as n from approvals where ${made} group by tool_name`,
  );
  const deadlines = yield* rows(sql`select ${dayOf('at')} as day, kind, count(*) as n from audit_events
    where team_id = ${window.teamId} and at >= ${window.since} and at <= ${window.until}
      and kind in (${sql.join(
        DEADLINE_KINDS.map((k) => sql`${k}`),
        sql`, `,
      )})
    group by ${dayOf('at')}, kind`);
  const runs = yield* readRunUsage(dialect, window);
  return {
    requestsByDay: byDay.map((r) => ({
      day: readNumber(r, 'day'),
      status: readEnum(r, 'status', APPROVAL_STATUSES),
      count: readNumber(r, 'n'),
    })),
    waits: waits.map((w) => ({ tool: readString(w, 'tool_name'), waitMs: readNumber(w, 'wait') })),
    tools: tools.map((t) => ({ tool: readString(t, 'tool_name'), count: readNumber(t, 'n') })),
    deadlines: deadlines.map((d) => ({
      day: readNumber(d, 'day'),
      kind: readEnum(d, 'kind', DEADLINE_KINDS),
      count: readNumber(d, 'n'),
    })),
    runs,
  };
}
