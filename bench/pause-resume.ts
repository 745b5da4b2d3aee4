import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BenchResult, median, type Row, target } from './report.js';
import { createStoreFixture } from './store-fixture.js';

export interface PauseResumeSize {
  /** Prior items in the thread, e.g. [10, 100, 1000]. */
  lengths: number[];
  repetitions: number;
}

/** Pause and resume cost against conversation length, through the real runner and SQLite stores. */
export async function benchPauseResume(size: PauseResumeSize): Promise<BenchResult> {
  const dir = mkdtempSync(join(tmpdir(), 'bot-bench-pause-'));
  const fixture = await createStoreFixture(join(dir, 'bot.db'));
  try {
    const measure = async (length: number): Promise<Row> => {
      const persist: number[] = [];
      const resume: number[] = [];
      const wal: number[] = [];
      const state: number[] = [];
      for (let rep = 0; rep < size.repetitions; rep++) {
        const { thread, conversationId } = await fixture.seedThread(length);
        await fixture.checkpoint();
        const { approval, sample } = await fixture.pause(thread, conversationId);
        const { resumeMs } = await fixture.approveAndResume(approval);
        persist.push(sample.persistMs);
        wal.push(sample.walBytes);
        state.push(sample.stateBytes);
        resume.push(resumeMs);
      }
      return {
        case: `${length} items`,
        metrics: {
          'persist ms': median(persist),
          'resume ms': median(resume),
          'WAL bytes/pause': median(wal),
          'state bytes': median(state),
        },
      };
    };
    await measure(size.lengths[0] ?? 0); // warm-up, dropped
    const measured: Row[] = [];
    for (const length of size.lengths) measured.push(await measure(length));
    const first = measured[0]?.metrics;
    const last = measured.at(-1)?.metrics;
    const ratio = (metric: string) => (last?.[metric] ?? 0) / Math.max(first?.[metric] ?? 0, 1e-9);
    const span = `${size.lengths.at(-1)} vs ${size.lengths[0]} items`;
    return {
      id: 'pause-resume',
      title: 'Pause and resume cost against conversation length (real runner and SQLite stores)',
      rows: measured,
      targets: [
        target(`persist time, ${span}`, ratio('persist ms'), 1.5, '×'),
        target(`resume time, ${span}`, ratio('resume ms'), 1.5, '×'),
        target(`bytes written per pause, ${span}`, ratio('WAL bytes/pause'), 1.5, '×'),
      ],
      notes: [
        `medians of ${size.repetitions} pauses per length; persist = the paused turn's transaction; resume = load the run, apply the decision, run the tool, store its output (up to loading history for the next model call)`,
        'WAL bytes: pages the pause transaction appended to the write-ahead log (autocheckpoint off while measuring)',
      ],
    };
  } finally {
    await fixture.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
