import { sql } from 'drizzle-orm';
import { EARLY_END_KINDS, type RunUsage, readUsagePayload, USAGE_END_KIND } from '../audit/usage.js';
import { readNumber, readOptionalString, readString } from './sql/columns.js';
import { type Program, rows } from './sql/program.js';
import type { Dialect } from './sql/sql-database.js';

const earlyEnds = sql.join(
  EARLY_END_KINDS.map((kind) => sql`${kind}`),
  sql`, `,
);

export interface UsageFilter {
  since?: number;
  until?: number;
  teamId?: string;
}

/** Runs that ended in the window, with their usage, who started them, the tools they called and when they ended. */
export function* readRunUsage(dialect: Dialect, filter: UsageFilter): Program<(RunUsage & { at: number })[]> {
  const window = sql.join(
    [
      // EARLY_END_KINDS count only with the usage so far in their payload.
      sql`(c.kind = ${USAGE_END_KIND} or (c.kind in (${earlyEnds}) and c.payload like ${'%"usage":%'}))`,
      ...(filter.since === undefined ? [] : [sql`c.at >= ${filter.since}`]),
      ...(filter.until === undefined ? [] : [sql`c.at <= ${filter.until}`]),
      ...(filter.teamId === undefined ? [] : [sql`c.team_id = ${filter.teamId}`]),
    ],
    sql` and `,
  );
  const completed = yield* rows(sql`select c.run_id, c.team_id, c.payload, c.at,
      (select s.actor from audit_events s where s.run_id = c.run_id and s.kind = 'run.started'
        order by s.seq limit 1) as user_id
    from audit_events c where ${window} and c.run_id is not null order by c.seq`);
  const tools = yield* rows(sql`select distinct t.run_id, ${dialect.jsonText(sql`t.payload`, 'tool')} as tool
    from audit_events t join audit_events c on c.run_id = t.run_id
    where t.kind = 'tool.finished' and ${window}`);
  const toolsOf = new Map<string, string[]>();
  for (const t of tools) {
    const tool = readOptionalString(t, 'tool');
    const runId = readString(t, 'run_id');
    if (tool !== null) toolsOf.set(runId, [...(toolsOf.get(runId) ?? []), tool]);
  }
  return completed.map((c) => {
    const runId = readString(c, 'run_id');
    let payload: unknown;
    try {
      payload = JSON.parse(readString(c, 'payload'));
    } catch {
      payload = {};
    }
    const usage = readUsagePayload(
      payload !== null && typeof payload === 'object' && !Array.isArray(payload)
        ? (payload as Record<string, unknown>)
        : {},
    );
    return {
      runId,
      teamId: readOptionalString(c, 'team_id'),
      userId: readOptionalString(c, 'user_id'),
      ...usage,
      at: readNumber(c, 'at'),
      tools: (toolsOf.get(runId) ?? []).sort(),
    };
  });
}
