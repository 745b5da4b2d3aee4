import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { withAdmin } from '../test/support/postgres-admin.js';
import { WRITER_POOL_SIZE, type WriterData, type WriterDatabase } from './decision-writer.js';
import { createBenchDatabase, setDatabaseDefault } from './postgres.js';
import type { BenchResult, Row } from './report.js';
import { createPostgresStoreFixture, createStoreFixture, pragma } from './store-fixture.js';

const reportSchema = z.object({
  committed: z.number().int(),
  lost: z.number().int(),
  statements: z.number().int(),
  commits: z.number().int(),
});

export interface DecisionsSize {
  /** Pending approvals decided per case. */
  approvals: number;
  writers: number[];
}

type Approvals = WriterData['approvals'];

/** Worker threads that load the writer module once (no timing), then serve every case of the benchmark. */
async function startWriters(count: number): Promise<Worker[]> {
  const workers: Worker[] = [];
  try {
    await Promise.all(
      Array.from({ length: count }, async () => {
        const worker = new Worker(new URL('./ts-worker.mjs', import.meta.url), {
          workerData: { module: new URL('./decision-writer.ts', import.meta.url).href, data: null },
        });
        workers.push(worker);
        await once(worker, 'message');
      }),
    );
    return workers;
  } catch (error) {
    await Promise.all(workers.map((w) => w.terminate()));
    throw error;
  }
}

/** Lets the `writers`, each with its own connection, race over `approvals`. */
async function race(writers: Worker[], database: WriterDatabase, approvals: Approvals) {
  // Opened one after another, each ready (connection open, migrations checked) before the race starts.
  for (const [i, worker] of writers.entries()) {
    const data: WriterData = {
      database,
      approvals,
      offset: Math.floor((i * approvals.length) / writers.length),
    };
    worker.postMessage(data);
    await once(worker, 'message');
  }
  const done = writers.map((w) => once(w, 'message').then(([report]) => reportSchema.parse(report)));
  const started = performance.now();
  for (const w of writers) w.postMessage('go');
  const reports = await Promise.all(done);
  const seconds = (performance.now() - started) / 1000;
  return {
    seconds,
    committed: reports.reduce((n, r) => n + r.committed, 0),
    lost: reports.reduce((n, r) => n + r.lost, 0),
    statements: reports.reduce((n, r) => n + r.statements, 0),
    commits: reports.reduce((n, r) => n + r.commits, 0),
  };
}

type Fixture = Awaited<ReturnType<typeof createStoreFixture>>;

/** `count` runs paused on an approval each, through the real runner and stores. */
async function seed(fixture: Fixture, count: number): Promise<Approvals> {
  const batch: Approvals = [];
  for (let i = 0; i < count; i++) {
    const { thread, conversationId } = await fixture.seedThread(0);
    const { approval } = await fixture.pause(thread, conversationId);
    batch.push({ id: approval.id, channelId: approval.channelId });
    if (i % 100 === 99) await fixture.checkpoint();
  }
  return batch;
}

/** One SQLite file seeded for every case (each case decides its own approvals). */
async function sqliteCases(size: DecisionsSize, writers: Worker[]): Promise<Row[]> {
  const dir = mkdtempSync(join(tmpdir(), 'bot-bench-decide-'));
  const path = join(dir, 'bot.db');
  const fixture = await createStoreFixture(path);
  try {
    await pragma(fixture.db, 'synchronous = OFF'); // seeding only; the writers use the product's settings
    const seeded: Approvals[] = [];
    for (const _ of size.writers) seeded.push(await seed(fixture, size.approvals));
    await fixture.checkpoint();
    await fixture.close();
    const rows: Row[] = [];
    for (const [i, n] of size.writers.entries()) {
      const result = await race(writers.slice(0, n), { kind: 'sqlite', path }, seeded[i] ?? []);
      rows.push(row(n, '', size.approvals, result));
    }
    return rows;
  } finally {
    await fixture.close(); // closed already unless seeding failed
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A fresh PostgreSQL database per case, seeded without waiting for the disk, raced with the defaults. */
async function postgresCases(size: DecisionsSize, writers: Worker[], serverUrl: string): Promise<Row[]> {
  const rows: Row[] = [];
  for (const n of size.writers) {
    const database = await createBenchDatabase(serverUrl);
    try {
      await setDatabaseDefault(database.url, 'synchronous_commit', 'off'); // seeding only
      const fixture = await createPostgresStoreFixture(database.url);
      let approvals: Approvals;
      try {
        approvals = await seed(fixture, size.approvals);
      } finally {
        await fixture.close();
      }
      // Statistics as autovacuum would have gathered them by now: without them the planner may find the request
      // to decide through the index of pending requests, reading every pending entry (seen with EXPLAIN).
      await withAdmin(database.url, (admin) => admin.query('analyze'));
      await setDatabaseDefault(database.url, 'synchronous_commit', null);
      const result = await race(writers.slice(0, n), { kind: 'postgres', url: database.url }, approvals);
      rows.push(row(n, ' (PostgreSQL)', size.approvals, result));
    } finally {
      await database.drop();
    }
  }
  return rows;
}

function row(
  writers: number,
  suffix: string,
  approvals: number,
  result: Awaited<ReturnType<typeof race>>,
): Row {
  if (result.committed !== approvals)
    throw new Error(
      `${result.committed} decisions committed for ${approvals} approvals (${writers} writers)`,
    );
  return {
    case: `${writers} writer${writers === 1 ? '' : 's'}${suffix}`,
    metrics: {
      decisions: result.committed,
      'lost races': result.lost,
      seconds: result.seconds,
      'decisions/s': result.committed / result.seconds,
      ...(suffix
        ? {
            'round trips per decision': result.statements / result.committed,
            'round trips per attempt': result.statements / (result.committed + result.lost),
            'commits per decision': result.commits / result.committed,
          }
        : {}),
    },
  };
}

/**
 * Decisions per second the approval service commits on one SQLite file (WAL, busy timeout, default sync) and
 * on one PostgreSQL database (the server's settings; each writer its own pool), 1 writer and N racing writers.
 */
export async function benchDecisions(size: DecisionsSize, postgresUrl: string): Promise<BenchResult> {
  const writers = await startWriters(Math.max(...size.writers));
  try {
    const rows = [
      ...(await sqliteCases(size, writers)),
      ...(await postgresCases(size, writers, postgresUrl)),
    ];
    return {
      id: 'decisions',
      title:
        'Decisions per second (approval service; one SQLite file, or one PostgreSQL database where marked; worker threads with their own connections)',
      rows,
      targets: [],
      notes: [
        'racing writers walk the same approvals from different offsets: exactly one decision commits per approval, the others read "already decided"',
        `PostgreSQL: a fresh database per case; each writer its own pool of ${WRITER_POOL_SIZE} (the bot's default), one decision at a time; the server's own durability settings`,
        'PostgreSQL round trips: every statement the writers sent (node-postgres waits for each answer before the next), per committed decision and per attempt (an attempt that lost the race reads "already decided"); commits per committed decision',
      ],
    };
  } finally {
    await Promise.all(writers.map((w) => w.terminate()));
  }
}
