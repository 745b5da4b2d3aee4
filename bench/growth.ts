import { rmSync, statSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import type { DatabaseConfig } from '../src/config.js';
import { openDatabase } from '../src/db/open-database.js';
import { row as oneRow } from '../src/db/sql/program.js';
import { silentLogger } from '../src/logger.js';
import { seedConsoleDatabase } from './console-seed.js';
import { runAuditCommand } from './growth-cli.js';
import { type ClickFigures, decisionsPerSecond, measureClicks } from './growth-clicks.js';
import { queryPlans, timeReads } from './growth-reads.js';
import { type Case, type Engine, type Measured, summarise } from './growth-summary.js';
import { createBenchDatabase, setDatabaseDefault } from './postgres.js';
import type { BenchResult, Row, TargetCheck } from './report.js';
import { type Fakes, scriptApprovalFlow, startFakes } from './rig.js';

export interface GrowthSize {
  /** Audit events in the log, smallest first (each with `pending[0]` pending requests). */
  events: number[];
  /** Pending requests: the first with every size of log, the others with the largest. */
  pending: number[];
  /** Calls timed per read. */
  samples: number;
  /** Decisions timed per database (one writer). */
  decisions: number;
  /** Clicks sent at once, and rounds of them per phase. */
  clickConcurrency: number;
  clickRounds: number;
}

const DAY = 86_400_000;
const MB = 1024 * 1024;
const load = () => (loadavg()[0] ?? 0).toFixed(1);

/** The prune limit (`--before Nd`) that leaves about 10 % of the events: history spans the 90 days before the last one. */
function pruneSpan(seeded: { events: number; decidedEvents: number }): string {
  const olderDays = (0.9 * seeded.events * 90) / Math.max(seeded.decidedEvents, 1);
  return `${Math.max(1, Math.round(91 - olderDays))}d`;
}

async function databaseSize(where: DatabaseConfig): Promise<number> {
  if (where.kind === 'sqlite') return statSync(where.path).size;
  const db = await openDatabase(where, silentLogger);
  try {
    const found = await db.read(function* () {
      return yield* oneRow(sql`select pg_database_size(current_database()) as n`);
    });
    return Number(found?.n ?? 0);
  } finally {
    await db.close();
  }
}

/** Seeds one database and measures everything on it; the prune last, as it changes the log. */
async function measureCase(
  fakes: Fakes,
  engine: Engine,
  where: DatabaseConfig,
  c: Case,
  size: GrowthSize,
  clicksWithPrune: boolean,
  answered: { count: number },
): Promise<Measured> {
  const label = `${engine}, ${c.events.toLocaleString('en')} events, ${c.pending.toLocaleString('en')} pending`;
  const seed = await seedConsoleDatabase(where, { pending: c.pending, events: c.events });
  const bytes = await databaseSize(where);
  const rows: Row[] = [
    {
      case: `${label}: seeded`,
      metrics: { events: seed.events, decided: seed.decided, 'seed s': seed.seconds, MB: bytes / MB },
    },
  ];
  const command = async (name: string, args: string[]) => {
    const run = await runAuditCommand(args, where);
    rows.push({ case: `${label}: ${name}`, metrics: { s: run.seconds, 'peak MiB': run.peakMiB } });
    return run;
  };
  const verify = await command('audit verify', ['verify']);
  const exported = await command('audit export, everything (JSON lines)', [
    'export',
    '--out',
    join(fakes.dir, 'all.jsonl'),
  ]);
  const day = new Date(Date.now() - 45 * DAY).toISOString().slice(0, 10);
  await command('audit export, one day (CSV)', [
    'export',
    '--out',
    join(fakes.dir, 'day.csv'),
    '--since',
    day,
    '--until',
    day,
  ]);
  const toDecide = seed.pendingIds.slice(-size.decisions);
  const reads = new Map<string, number>();
  for (const read of await timeReads(
    where,
    fakes.slack.url,
    seed.pendingIds.slice(0, -size.decisions),
    size.samples,
  )) {
    reads.set(read.name, read.p99);
    rows.push({ case: `${label}: ${read.name}`, metrics: { 'p50 ms': read.p50, 'p99 ms': read.p99 } });
  }
  const plans = clicksWithPrune ? await queryPlans(where) : undefined;
  const decisions = await decisionsPerSecond(where, toDecide);
  rows.push({ case: `${label}: decisions (1 writer)`, metrics: { 'decisions/s': decisions.perSecond } });
  const before = pruneSpan({ events: seed.events, decidedEvents: seed.events - c.pending });
  const prune = () => runAuditCommand(['prune', '--before', before], where);
  let clicks: ClickFigures | undefined;
  if (c.empty || clicksWithPrune) {
    clicks = await measureClicks(
      fakes,
      where,
      size.clickConcurrency,
      size.clickRounds,
      answered,
      clicksWithPrune ? prune : undefined,
    );
    rows.push({
      case: `${label}: click → ack, ${size.clickConcurrency} concurrent`,
      metrics: { clicks: clicks.clicks, 'p50 ms': clicks.quietP50, 'p99 ms': clicks.quietP99 },
    });
    if (clicks.duringP99 !== undefined)
      rows.push({
        case: `${label}: click → ack while audit prune --before ${before} runs`,
        metrics: { clicks: clicks.duringClicks ?? 0, 'p99 ms': clicks.duringP99 },
      });
  }
  if (!c.empty) {
    const run = clicks?.duringRun ?? (await prune());
    const pruned = /(\d+) audit events pruned/.exec(run.out);
    rows.push({
      case: `${label}: audit prune --before ${before} (events older: about 90 %)`,
      metrics: { s: run.seconds, 'peak MiB': run.peakMiB, 'events rewritten': Number(pruned?.[1] ?? 0) },
    });
  }
  return {
    rows,
    bytes,
    decided: seed.decided,
    reads,
    verifyMiB: verify.peakMiB,
    exportMiB: exported.peakMiB,
    decisionsPerSecond: decisions.perSecond,
    ...(clicks ? { clicks } : {}),
    ...(plans ? { plans } : {}),
  };
}

/** A fresh database of the engine for one case, and how to throw it away. */
async function freshDatabase(engine: Engine, fakes: Fakes, postgresUrl: string, n: number) {
  if (engine === 'SQLite') {
    const path = join(fakes.dir, `growth-${n}.db`);
    return { where: { kind: 'sqlite' as const, path }, drop: async () => rmSync(path, { force: true }) };
  }
  const database = await createBenchDatabase(postgresUrl);
  return { where: { kind: 'postgres' as const, url: database.url, poolSize: 10 }, drop: database.drop };
}

/**
 * How costs grow with the log and the queue, on SQLite and PostgreSQL: the audit commands (time, peak memory),
 * the reads of every surface, decisions and click → ack against an empty log, a prune of 90 % of the log with
 * clicks arriving meanwhile, and the database's size.
 */
export async function benchGrowth(size: GrowthSize, postgresUrl: string): Promise<BenchResult> {
  const fakes = await startFakes();
  const loadAtStart = load();
  const rows: Row[] = [];
  const targets: TargetCheck[] = [];
  const notes: string[] = [];
  const answered = { count: 0 };
  scriptApprovalFlow(fakes.model);
  try {
    let n = 0;
    for (const engine of ['SQLite', 'PostgreSQL'] as const) {
      const [fewest = 1_000, ...more] = size.pending;
      const largest = Math.max(...size.events);
      const cases: Case[] = [
        { events: fewest, pending: fewest, empty: true },
        ...size.events.map((events) => ({ events, pending: fewest, empty: false })),
        ...more.map((pending) => ({ events: largest, pending, empty: false })),
      ];
      const measured: Measured[] = [];
      for (const c of cases) {
        const { where, drop } = await freshDatabase(engine, fakes, postgresUrl, n++);
        try {
          // Seeding need not wait for the disk; the measured sessions get the server's durable defaults.
          if (where.kind === 'postgres') await setDatabaseDefault(where.url, 'synchronous_commit', 'off');
          const withPrune = !c.empty && c.events === largest && c.pending === fewest;
          const m = await measureCase(fakes, engine, where, c, size, withPrune, answered);
          measured.push(m);
          rows.push(...m.rows);
        } finally {
          await drop();
        }
      }
      summarise(engine, cases, measured, rows, targets, notes);
    }
    notes.push(
      `load average ${loadAtStart} at the start of this section, ${load()} at its end (2 cores shared with other work: absolute times drift, ratios hold better)`,
    );
    return {
      id: 'growth',
      title: 'How costs grow (audit log and pending requests; SQLite and PostgreSQL)',
      rows,
      targets,
      notes,
    };
  } finally {
    await fakes.close();
  }
}
