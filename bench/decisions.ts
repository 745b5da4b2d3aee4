import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import type { WriterData } from './decision-writer.js';
import type { BenchResult, Row } from './report.js';
import { createStoreFixture, pragma } from './store-fixture.js';

const reportSchema = z.object({ committed: z.number().int(), lost: z.number().int() });

export interface DecisionsSize {
  /** Pending approvals decided per case. */
  approvals: number;
  writers: number[];
}

/** Starts `writers` worker threads, each with its own connection, and lets them race over `approvals`. */
async function race(path: string, approvals: WriterData['approvals'], writers: number) {
  // Opened one after another, each ready (connection open, migrations checked) before the race starts.
  const workers: Worker[] = [];
  try {
    for (let i = 0; i < writers; i++) {
      const data: WriterData = { path, approvals, offset: Math.floor((i * approvals.length) / writers) };
      const worker = new Worker(new URL('./ts-worker.mjs', import.meta.url), {
        workerData: { module: new URL('./decision-writer.ts', import.meta.url).href, data },
      });
      workers.push(worker);
      await once(worker, 'message');
    }
    const done = workers.map((w) => once(w, 'message').then(([report]) => reportSchema.parse(report)));
    const started = performance.now();
    for (const w of workers) w.postMessage('go');
    const reports = await Promise.all(done);
    const seconds = (performance.now() - started) / 1000;
    return {
      seconds,
      committed: reports.reduce((n, r) => n + r.committed, 0),
      lost: reports.reduce((n, r) => n + r.lost, 0),
    };
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

/** Decisions per second the approval service commits on one SQLite file (WAL, busy timeout, default sync). */
export async function benchDecisions(size: DecisionsSize): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bot-bench-decide-'));
  const path = join(dir, 'bot.db');
  const fixture = await createStoreFixture(path);
  try {
    await pragma(fixture.db, 'synchronous = OFF'); // seeding only; the writers use the product's settings
    const seeded: WriterData['approvals'][] = [];
    for (const _ of size.writers) {
      const batch: WriterData['approvals'] = [];
      for (let i = 0; i < size.approvals; i++) {
        const { thread, conversationId } = await fixture.seedThread(0);
        const { approval } = await fixture.pause(thread, conversationId);
        batch.push({ id: approval.id, channelId: approval.channelId });
        if (i % 100 === 99) await fixture.checkpoint();
      }
      seeded.push(batch);
    }
    await fixture.checkpoint();
    await fixture.close();
    const rows: Row[] = [];
    for (const [i, writers] of size.writers.entries()) {
      const result = await race(path, seeded[i] ?? [], writers);
      if (result.committed !== size.approvals)
        throw new Error(`${result.committed} decisions committed for ${size.approvals} approvals`);
      rows.push({
        case: `${writers} writer${writers === 1 ? '' : 's'}`,
        metrics: {
          decisions: result.committed,
          'lost races': result.lost,
          seconds: result.seconds,
          'decisions/s': result.committed / result.seconds,
        },
      });
    }
    return {
      id: 'decisions',
      title:
        'Decisions per second (approval service, one SQLite file, worker threads with their own connections)',
      rows,
      targets: [],
      notes: [
        'racing writers walk the same approvals from different offsets: exactly one decision commits per approval, the others read "already decided"',
      ],
    };
  } finally {
    await fixture.close(); // closed already unless seeding failed
    rmSync(dir, { recursive: true, force: true });
  }
}
