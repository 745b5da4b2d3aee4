import { fileURLToPath } from 'node:url';
import { type BotProcess, startBotProcess } from '../test/support/bot-process.js';
import type { PreparedRequest } from './load.js';
import { createBenchDatabase } from './postgres.js';
import { type BenchResult, quantile, type Row, type TargetCheck, target } from './report.js';
import {
  clickRequest,
  type Fakes,
  pauseThreads,
  scriptApprovalFlow,
  startFakes,
  waitForAnswers,
} from './rig.js';

export interface ClickAckSize {
  concurrencies: number[];
  /** Clicks measured per concurrency (rounded up to whole rounds). */
  samples: number;
}

/** Bot processes on one database, sharing the fakes; the threads answered so far (over all setups). */
interface Setup {
  fakes: Fakes;
  floor: BotProcess;
  /** The bots' environment besides the fakes': where the database is. */
  env: Record<string, string>;
  processes: number;
  answered: { count: number };
}

interface Measured {
  concurrency: number;
  bot: number[];
  floor: number[];
  /** The floor's p99 in each round: how much the floor itself moves within the run. */
  floorRoundP99: number[];
}

/** Starts every process of a setup at once; if one fails, the others are stopped before the error. */
async function startBots(env: Record<string, string>, processes: number): Promise<BotProcess[]> {
  const started = await Promise.allSettled(Array.from({ length: processes }, () => startBotProcess({ env })));
  const bots = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const failed = started.find((s) => s.status === 'rejected');
  if (failed) {
    await Promise.all(bots.map((bot) => bot.kill('SIGTERM')));
    throw failed.reason;
  }
  return bots;
}

/**
 * Pauses enough threads, warms up, then measures every concurrency; with several processes the mentions and
 * the clicks go to them in turn (round-robin), as a load balancer would spread them.
 */
async function measureSetup(size: ClickAckSize, setup: Setup): Promise<Measured[]> {
  const { fakes, floor } = setup;
  const bots = await startBots({ ...setup.env }, setup.processes);
  try {
    const urls = bots.map((bot) => `${bot.url}/slack/events`);
    const rounds = size.concurrencies.map((c) => Math.max(1, Math.ceil(size.samples / c)));
    const warmup = Math.max(...size.concurrencies);
    const needed = warmup + size.concurrencies.reduce((sum, c, i) => sum + c * (rounds[i] ?? 1), 0);
    const cards = await pauseThreads(fakes, urls, needed);
    let used = 0;
    let clicked = 0;
    const take = (n: number) => {
      const batch = cards.slice(used, used + n);
      used += n;
      return batch;
    };
    const measure = async (n: number) => {
      const clicks = take(n).map((card) => clickRequest(urls[clicked++ % urls.length] ?? '', card));
      await warmConnections(fakes, clicks);
      const botTimes = await fakes.load.fire(clicks);
      setup.answered.count += n;
      await waitForAnswers(fakes, setup.answered.count);
      const floorClicks = clicks.map((c): PreparedRequest => ({ ...c, url: `${floor.url}/slack/events` }));
      await warmConnections(fakes, floorClicks);
      const floorTimes = await fakes.load.fire(floorClicks);
      return { botTimes, floorTimes };
    };
    await measure(warmup);
    const measured: Measured[] = [];
    for (const [i, c] of size.concurrencies.entries()) {
      const bot: number[] = [];
      const floorTimes: number[] = [];
      const floorRoundP99: number[] = [];
      for (let r = 0; r < (rounds[i] ?? 1); r++) {
        const times = await measure(c);
        bot.push(...times.botTimes);
        floorTimes.push(...times.floorTimes);
        floorRoundP99.push(quantile(times.floorTimes, 0.99));
      }
      measured.push({ concurrency: c, bot, floor: floorTimes, floorRoundP99 });
    }
    return measured;
  } finally {
    await Promise.all(bots.map((bot) => bot.kill('SIGTERM')));
  }
}

/**
 * Opens a connection for each request about to be timed (a `GET /healthz` each, all at once, to the same
 * servers), for the bot and the floor alike: a round comes more than 5 s after the last, when Node's servers have
 * closed the idle ones, and opening a hundred connections at once is the load generator's and the kernel's work,
 * not the server's.
 */
async function warmConnections(fakes: Fakes, batch: readonly PreparedRequest[]): Promise<void> {
  await fakes.load.fire(batch.map((request) => ({ url: `${new URL(request.url).origin}/healthz` })));
}

function row(m: Measured, suffix: string): Row {
  return {
    case: `${m.concurrency} concurrent${suffix}`,
    metrics: {
      clicks: m.bot.length,
      'bot p50 ms': quantile(m.bot, 0.5),
      'bot p99 ms': quantile(m.bot, 0.99),
      'floor p50 ms': quantile(m.floor, 0.5),
      'floor p99 ms': quantile(m.floor, 0.99),
      'floor p99 of a round, lowest ms': Math.min(...m.floorRoundP99),
      'floor p99 of a round, highest ms': Math.max(...m.floorRoundP99),
      'p50 ratio': p50Ratio(m),
      'p99 ratio': ratio(m),
    },
  };
}

const quantileRatio = (m: Measured, q: number) => quantile(m.bot, q) / Math.max(quantile(m.floor, q), 1e-6);
const ratio = (m: Measured) => quantileRatio(m, 0.99);
const p50Ratio = (m: Measured) => quantileRatio(m, 0.5);

/** PostgreSQL setups: figures only, no targets (two cores are not a scaling target). */
const POSTGRES_PROCESSES = [1, 3];

/**
 * Click → ack: the HTTP response time of signed `block_actions` requests on distinct pending approvals, sent
 * c at a time from a load generator thread, next to a trivial server measured the same way in the same run.
 * The bot on SQLite (one process; the targets), then on a fresh PostgreSQL database with 1 and 3 processes.
 */
export async function benchClickAck(size: ClickAckSize, postgresUrl: string): Promise<BenchResult> {
  const fakes = await startFakes();
  let floor: BotProcess | undefined;
  try {
    floor = await startBotProcess({
      env: {},
      entry: fileURLToPath(new URL('./floor-server.ts', import.meta.url)),
    });
    scriptApprovalFlow(fakes.model);
    const answered = { count: 0 };
    const rows: Row[] = [];
    const targets: TargetCheck[] = [];
    const sqlite = await measureSetup(size, { fakes, floor, env: fakes.env, processes: 1, answered });
    for (const m of sqlite) {
      rows.push(row(m, ''));
      targets.push(target(`click ack p99 / floor p99 at ${m.concurrency} concurrent`, ratio(m), 1.5, '×'));
      targets.push(target(`click ack p50 / floor p50 at ${m.concurrency} concurrent`, p50Ratio(m), 1.2, '×'));
    }
    const { DATABASE_PATH: _sqliteOnly, ...withoutPath } = fakes.env;
    for (const processes of POSTGRES_PROCESSES) {
      const database = await createBenchDatabase(postgresUrl);
      try {
        const env = { ...withoutPath, DATABASE_URL: database.url };
        const measured = await measureSetup(size, { fakes, floor, env, processes, answered });
        const suffix = ` (PostgreSQL, ${processes} process${processes === 1 ? '' : 'es'})`;
        for (const m of measured) rows.push(row(m, suffix));
      } finally {
        await database.drop();
      }
    }
    return {
      id: 'click-ack',
      title: 'Click → ack (signed block_actions, HTTP response time)',
      rows,
      targets,
      notes: [
        'each click decides a distinct pending approval; each round waits for the resumed runs to answer before the next',
        "the bot (npm start entry point) and the floor (a Node HTTP server that reads the body and answers 200) each run as their own process; same load generator thread (node:http, keep-alive connections opened before each round), same requests, same run; the floor's p99 of each round, lowest and highest, shows its own spread",
        'rows without "(PostgreSQL, …)": one bot process on a SQLite file (these carry the targets). PostgreSQL rows: figures only, a fresh database each, the bot processes started together; with 3 processes the mentions and clicks go to them in turn (round-robin), and all of them share the same cores with PostgreSQL, the fakes and the load generator',
      ],
    };
  } finally {
    await floor?.kill('SIGTERM');
    await fakes.close();
  }
}
