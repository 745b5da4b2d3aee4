import { WebClient } from '@slack/web-api';
import { type SQL, sql } from 'drizzle-orm';
import type { ApprovalReports } from '../src/approvals/audit-queries.js';
import { Deciders } from '../src/approvals/deciders.js';
import type { DatabaseConfig } from '../src/config.js';
import { createAuditQueryStore, decidedPageQuery } from '../src/db/audit-query-store.js';
import { createHomeViewerStore } from '../src/db/home-viewer-store.js';
import { openDatabase } from '../src/db/open-database.js';
import { rows } from '../src/db/sql/program.js';
import type { SqlDatabase } from '../src/db/sql/sql-database.js';
import { silentLogger } from '../src/logger.js';
import { answerApprovalsCommand } from '../src/slack/approvals-command.js';
import { createHomePublisher } from '../src/slack/home-publisher.js';
import { quantile } from './report.js';

const TEAM = 'T1';
const ADMIN = 'UADMIN';
const DAY = 86_400_000;

/** One read the surfaces make, timed: p50 and p99 in ms over `samples` calls. */
export interface ReadTiming {
  name: string;
  p50: number;
  p99: number;
}

/** Each read as its surface makes it, through the same core functions and stores; `i` picks a request. */
function reads(
  db: SqlDatabase,
  slackUrl: string,
  pendingIds: readonly string[],
): [string, (i: number) => Promise<unknown>][] {
  const queries = createAuditQueryStore(db);
  const clock = { now: () => Date.now() };
  const deciders = new Deciders({ clock, adminUserIds: [ADMIN] });
  const command = (text: string) =>
    answerApprovalsCommand(
      {
        queries,
        access: deciders,
        standing: { revoke: () => Promise.reject(new Error('not measured')) },
        isAdmin: (workspace, userId) => deciders.isAdmin(workspace, userId),
        now: clock.now,
        admins: undefined as never,
      },
      { userId: ADMIN, teamId: TEAM, enterpriseId: undefined, text },
    );
  const client = new WebClient('xoxb-bench-token', { slackApiUrl: slackUrl, retryConfig: { retries: 0 } });
  const home = createHomePublisher(
    { forTeam: () => client },
    {
      queries,
      viewers: createHomeViewerStore({
        db,
        clock,
        newId: () => 'unused',
        owner: 'bench',
        leaseMs: 30_000,
        ownerIsGone: () => false,
      }),
      access: deciders,
      deciders,
      clock,
      logger: silentLogger,
    },
  );
  const pick = (i: number) => pendingIds[(i * 7919) % Math.max(pendingIds.length, 1)] ?? '';
  const stats: ApprovalReports['stats'] = (teamId, since) => queries.stats(teamId, since);
  return [
    ['/approvals (overview)', () => command('')],
    ['/approvals pending (list)', () => command('pending')],
    ['/approvals history (first page)', () => command('history')],
    ['/approvals show ID', (i) => command(`show ${pick(i)}`)],
    ['/approvals stats (30 days)', () => command('stats since:30d')],
    [
      'App Home render and publish (admin)',
      () => home.publish(ADMIN, { teamId: TEAM, enterpriseId: undefined }),
    ],
    ['console pending list (first 500)', () => queries.pending(TEAM, { limit: 500, offset: 0 })],
    ['console decided list (first page)', () => queries.decided({ teamId: TEAM, limit: 50 })],
    [
      'console charts (30 days)',
      () => queries.trends({ teamId: TEAM, since: Date.now() - 30 * DAY, until: Date.now() }),
    ],
    ['console stats (all time)', () => stats(TEAM, undefined)],
  ];
}

/** Times every read `samples` times (after one untimed call: statements prepared, code warm). */
export async function timeReads(
  where: DatabaseConfig,
  slackUrl: string,
  pendingIds: readonly string[],
  samples: number,
): Promise<ReadTiming[]> {
  const db = await openDatabase(where, silentLogger);
  try {
    const timings: ReadTiming[] = [];
    for (const [name, read] of reads(db, slackUrl, pendingIds)) {
      await read(0);
      const times: number[] = [];
      for (let i = 1; i <= samples; i++) {
        const started = performance.now();
        await read(i);
        times.push(performance.now() - started);
      }
      timings.push({ name, p50: quantile(times, 0.5), p99: quantile(times, 0.99) });
    }
    return timings;
  } finally {
    await db.close();
  }
}

/** The statements behind the reads above that look at the most rows, for their plans when a read grows. */
const PLANNED: [string, SQL][] = [
  [
    'pending list',
    sql.raw(
      `select * from approvals where team_id = '${TEAM}' and status = 'pending' order by created_at, id limit 500`,
    ),
  ],
  [
    'pending count',
    sql.raw(`select count(*) from approvals where team_id = '${TEAM}' and status = 'pending'`),
  ],
  [
    'stats counts (daily totals)',
    sql.raw(`select tool_name, status, sum(requests) from approval_days where team_id = '${TEAM}'
      group by tool_name, status`),
  ],
  [
    'stats waits (daily totals)',
    sql.raw(`select bucket, sum(decided) from approval_wait_days where team_id = '${TEAM}' group by bucket`),
  ],
  ['decided page', decidedPageQuery({ teamId: TEAM, limit: 51 })],
];

/** The query plans (SQLite's `EXPLAIN QUERY PLAN`, PostgreSQL's `EXPLAIN`) of the reads' main statements. */
export async function queryPlans(where: DatabaseConfig): Promise<string[]> {
  const db = await openDatabase(where, silentLogger);
  try {
    const explain = db.dialect.name === 'sqlite' ? 'explain query plan' : 'explain';
    const lines: string[] = [];
    for (const [name, statement] of PLANNED) {
      const plan = await db.read(function* () {
        return yield* rows(sql`${sql.raw(explain)} ${statement}`);
      });
      const steps = plan.map((step) => String(step.detail ?? step['QUERY PLAN'] ?? JSON.stringify(step)));
      lines.push(`${name}: ${steps.join(' / ')}`);
    }
    return lines;
  } finally {
    await db.close();
  }
}
