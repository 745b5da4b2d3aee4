import { join } from 'node:path';
import { freePort, startBotProcess } from '../test/support/bot-process.js';
import { type BenchResult, median, type Row, target } from './report.js';
import { startFakes } from './rig.js';

export interface StartupSize {
  /** Starts measured per case. */
  starts: number;
}

/** Milliseconds from spawning the bot (as `npm start` runs it) to its first `GET /healthz` 200. */
async function timeStart(env: Record<string, string>): Promise<number> {
  const port = await freePort();
  const started = performance.now();
  const bot = await startBotProcess({ env: { ...env, PORT: String(port) }, readyPollMs: 5 });
  const ready = performance.now() - started;
  await bot.kill('SIGTERM');
  return ready;
}

/**
 * Start-up: how long the bot takes from spawn to a healthy `/healthz`, on a new database (the migrations run)
 * and on one a previous start left. One start before measuring, so `dist/` is built and the files are cached.
 */
export async function benchStartup(size: StartupSize): Promise<BenchResult> {
  const fakes = await startFakes();
  try {
    await timeStart(fakes.env);
    const fresh: number[] = [];
    const existing: number[] = [];
    for (let i = 0; i < size.starts; i++) {
      const env = { ...fakes.env, DATABASE_PATH: join(fakes.dir, `startup-${i}.db`) };
      fresh.push(await timeStart(env));
      existing.push(await timeStart(env));
    }
    const row = (name: string, times: number[]): Row => ({
      case: name,
      metrics: { starts: times.length, 'median ms': median(times), 'max ms': Math.max(...times) },
    });
    return {
      id: 'startup',
      title: 'Start-up: spawn → GET /healthz 200',
      rows: [row('new database (migrations run)', fresh), row('existing database', existing)],
      targets: [
        target('start-up median, new database', median(fresh), 1000, 'ms'),
        target('start-up median, existing database', median(existing), 1000, 'ms'),
      ],
      notes: [
        "the bot as npm start runs it (compiled, the bot's default WORKERS, SQLite), against the fakes; /healthz asked every 5 ms",
      ],
    };
  } finally {
    await fakes.close();
  }
}
