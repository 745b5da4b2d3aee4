import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BotProcess, startBotProcess } from '../test/support/bot-process.js';
import { type ConsoleClient, signInWithLink } from '../test/support/console-client.js';
import { type ConsoleLoad, startConsoleLoad, timeGets } from './console-load.js';
import { type ConsoleSeed, seedConsoleDatabase } from './console-seed.js';
import type { PreparedRequest } from './load.js';
import { type BenchResult, quantile, type Row, type TargetCheck, target } from './report.js';
import {
  clickRequest,
  type Fakes,
  pauseThreads,
  scriptApprovalFlow,
  startFakes,
  waitForAnswers,
} from './rig.js';

export interface ConsoleSize {
  /** Pending requests and audit events in the database before the bot starts. */
  pending: number;
  events: number;
  /** GETs timed per page or API call, one at a time and then `concurrency` at a time. */
  samples: number;
  concurrency: number;
  /** Clicks sent at once, and clicks measured in each phase (quiet, console loaded). */
  clickConcurrency: number;
  clicks: number;
  /** Loops loading console pages at once while the loaded clicks are measured. */
  loadLanes: number;
}

const ADMIN = 'UADMIN';
/** What the load asks for in turn: the decide page and the pending list, the reads that look at the most rows. */
const LOAD_PATHS = ['/console', '/console/api/approvals?status=pending'];

interface Phase {
  bot: number[];
  floor: number[];
  /** Per round: ms from its clicks until every run they resumed had answered in its thread. */
  resumed: number[];
}

/**
 * The cursor of the decided list `depth` requests in (latest decision first), walked to a page of 100 at a time
 * as a client would: cursors are opaque positions, not offsets.
 */
async function decidedCursorAt(client: ConsoleClient, depth: number): Promise<string> {
  let cursor = '';
  for (let seen = 0; seen + 100 <= depth; seen += 100) {
    const res = await client.get(`/console/api/approvals?status=decided&limit=100&cursor=${cursor}`);
    const page = (await res.json()) as { nextCursor: string | null };
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return cursor;
}

/** The GETs timed, by case name: the path of the i-th request. */
function consoleCases(seed: ConsoleSeed, deepCursor: string): [string, (i: number) => string][] {
  const pending = seed.pendingIds;
  return [
    ['GET /console (decide page)', () => '/console'],
    ['GET /console/api/approvals?status=pending', () => '/console/api/approvals?status=pending'],
    [
      'GET /console/api/approvals/:id (pending)',
      (i) => `/console/api/approvals/${pending[(i * 7919) % pending.length] ?? ''}`,
    ],
    ['GET /console/api/approvals?status=decided', () => '/console/api/approvals?status=decided'],
    [
      'GET /console/api/approvals?status=decided, deep page by cursor',
      () => `/console/api/approvals?status=decided&cursor=${deepCursor}`,
    ],
    // The audit log, newest first, paged by sequence number (the cursor is the last one seen).
    ['GET /console/api/audit (newest page)', () => '/console/api/audit'],
    [
      'GET /console/api/audit, filtered (tool, outcome, last 30 days)',
      () => '/console/api/audit?tool=send_email&outcome=rejected&since=30d',
    ],
    [
      'GET /console/api/audit, deep page by cursor',
      () => `/console/api/audit?cursor=${Math.max(2, Math.floor(seed.events * 0.05))}`,
    ],
  ];
}

async function timeConsole(client: ConsoleClient, size: ConsoleSize, seed: ConsoleSeed): Promise<Row[]> {
  const rows: Row[] = [];
  const deepCursor = await decidedCursorAt(client, Math.floor(seed.decided * 0.9));
  for (const [name, pathOf] of consoleCases(seed, deepCursor)) {
    // A first request of each, untimed: statements prepared, code warm.
    await timeGets(client, pathOf, 1, 1);
    for (const concurrency of [1, size.concurrency]) {
      const times = await timeGets(client, pathOf, size.samples, concurrency);
      rows.push({
        case: `${name}, ${concurrency === 1 ? 'one at a time' : `${concurrency} at a time`}`,
        metrics: {
          requests: times.length,
          'p50 ms': quantile(times, 0.5),
          'p99 ms': quantile(times, 0.99),
        },
      });
    }
  }
  return rows;
}

/**
 * Click → ack on the seeded bot as click-ack measures it (distinct pending approvals, `clickConcurrency` at once,
 * each round waiting for the resumed runs, the floor sent the same requests): quiet, then while `load` runs.
 */
async function measureClicks(
  fakes: Fakes,
  bot: BotProcess,
  floor: BotProcess,
  size: ConsoleSize,
  loaded: () => ConsoleLoad,
) {
  const c = size.clickConcurrency;
  const rounds = Math.max(1, Math.ceil(size.clicks / c));
  const cards = await pauseThreads(fakes, `${bot.url}/slack/events`, c * (1 + 2 * rounds));
  let used = 0;
  let answered = 0;
  const round = async (phase: Phase) => {
    const clicks = cards.slice(used, used + c).map((card) => clickRequest(`${bot.url}/slack/events`, card));
    used += c;
    const fired = performance.now();
    phase.bot.push(...(await fakes.load.fire(clicks)));
    answered += c;
    await waitForAnswers(fakes, answered);
    phase.resumed.push(performance.now() - fired);
    const toFloor = clicks.map((click): PreparedRequest => ({ ...click, url: `${floor.url}/slack/events` }));
    phase.floor.push(...(await fakes.load.fire(toFloor)));
  };
  await round({ bot: [], floor: [], resumed: [] });
  const quiet: Phase = { bot: [], floor: [], resumed: [] };
  for (let r = 0; r < rounds; r++) await round(quiet);
  const load = loaded();
  const busy: Phase = { bot: [], floor: [], resumed: [] };
  try {
    for (let r = 0; r < rounds; r++) await round(busy);
  } catch (error) {
    await load.stop().catch(() => undefined);
    throw error;
  }
  return { quiet, busy, served: await load.stop() };
}

const p99 = (values: readonly number[]) => quantile(values, 0.99);
const p50 = (values: readonly number[]) => quantile(values, 0.5);
const ratio = (a: number, b: number) => a / Math.max(b, 1e-6);

function clickRow(name: string, phase: Phase, extra: Record<string, number> = {}): Row {
  return {
    case: name,
    metrics: {
      clicks: phase.bot.length,
      'bot p50 ms': p50(phase.bot),
      'bot p99 ms': p99(phase.bot),
      'floor p50 ms': p50(phase.floor),
      'floor p99 ms': p99(phase.floor),
      'p99 ratio': ratio(p99(phase.bot), p99(phase.floor)),
      'runs resumed p50 ms': p50(phase.resumed),
      'runs resumed max ms': Math.max(...phase.resumed),
      ...extra,
    },
  };
}

/**
 * The web console on a database of `pending` requests and `events` audit events: the client-side time of its
 * pages and JSON API (one at a time and a few at once), and click → ack with and without console load.
 */
export async function benchConsole(size: ConsoleSize): Promise<BenchResult> {
  const fakes = await startFakes();
  let floor: BotProcess | undefined;
  let bot: BotProcess | undefined;
  try {
    const database = { kind: 'sqlite' as const, path: join(fakes.dir, 'bot.db') };
    const seed = await seedConsoleDatabase(database, { pending: size.pending, events: size.events });
    floor = await startBotProcess({
      env: {},
      entry: fileURLToPath(new URL('./floor-server.ts', import.meta.url)),
    });
    scriptApprovalFlow(fakes.model);
    const env = { ...fakes.env, DATABASE_PATH: database.path, ADMIN_USER_IDS: ADMIN };
    bot = await startBotProcess({ env, readyTimeoutMs: 60_000 });
    const client = await signInWithLink(bot.url, env, ADMIN);
    const rows: Row[] = [
      {
        case: 'seeded database',
        metrics: {
          pending: seed.pendingIds.length,
          decided: seed.decided,
          events: seed.events,
          'seed s': seed.seconds,
        },
      },
      ...(await timeConsole(client, size, seed)),
    ];
    const clicks = await measureClicks(fakes, bot, floor, size, () =>
      startConsoleLoad(client, size.loadLanes, LOAD_PATHS),
    );
    const c = size.clickConcurrency;
    const loadedP99 = p99(clicks.busy.bot);
    rows.push(clickRow(`click → ack, ${c} concurrent, console quiet`, clicks.quiet));
    rows.push(
      clickRow(`click → ack, ${c} concurrent, console loaded`, clicks.busy, {
        'loaded / quiet p99': ratio(loadedP99, p99(clicks.quiet.bot)),
        'console requests/s': clicks.served.requests / Math.max(clicks.served.seconds, 1e-6),
      }),
    );
    const targets: TargetCheck[] = [
      target(
        `click ack p99 / floor p99 at ${c} concurrent while the console is loaded`,
        ratio(loadedP99, p99(clicks.busy.floor)),
        1.5,
        '×',
      ),
    ];
    return {
      id: 'console',
      title: 'Web console (pages and JSON API; click → ack while it is loaded)',
      rows,
      targets,
      notes: [
        `the bot (npm start entry point, one SQLite file) starts on a database seeded with ${size.pending} pending requests and ${size.events} audit events (decided requests over 90 days); an admin signed in with a one-time link reads pages and API from the bench process (client-side time, whole body read)`,
        `click rows: ${c} signed Approve clicks at once on distinct pending approvals, each round waiting for the resumed runs ("runs resumed": from a round's clicks until all its runs answered), the floor sent the same requests after each round; "console loaded": ${size.loadLanes} loops asking for the decide page and the pending list in turn meanwhile (floor rounds included)`,
      ],
    };
  } catch (error) {
    // The bot's own words say why a page failed (a crash, a refusal).
    const said = bot?.output().slice(-4000);
    throw said ? new Error(`${String(error)}; the bot's last output:\n${said}`, { cause: error }) : error;
  } finally {
    await bot?.kill('SIGTERM');
    await floor?.kill('SIGTERM');
    await fakes.close();
  }
}
