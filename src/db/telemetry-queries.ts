import { sql } from 'drizzle-orm';
import type { TelemetryLookups } from '../telemetry/telemetry.js';
import { votesOf } from './approval-store.js';
import { readNumber, readString } from './sql/columns.js';
import { row, rows } from './sql/program.js';
import type { SqlDatabase } from './sql/sql-database.js';

/** What telemetry reads: when a request or run began (seen by another thread or process), pending counts. */
export function createTelemetryLookups(db: SqlDatabase): TelemetryLookups {
  const createdAt = (table: 'approvals' | 'runs', id: string) =>
    db.read(function* () {
      const found = yield* row(sql`select created_at from ${sql.raw(table)} where id = ${id}`);
      return found ? readNumber(found, 'created_at') : undefined;
    });
  return {
    approvalRequestedAt: (id) => createdAt('approvals', id),
    runStartedAt: (id) => createdAt('runs', id),
    voters: (id) =>
      db.read(function* () {
        return (yield* votesOf(id)).map((v) => v.userId);
      }),
    pending: () =>
      db.read(function* () {
        // Every workspace with requests, so one whose last request was decided reads 0 rather than nothing.
        const found = yield* rows(sql`select team_id, sum(case when status = 'pending' then 1 else 0 end) as n
          from approvals group by team_id`);
        return found.map((r) => ({ teamId: readString(r, 'team_id'), count: readNumber(r, 'n') }));
      }),
  };
}
