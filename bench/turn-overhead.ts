import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { type BotProcess, startBotProcess } from '../test/support/bot-process.js';
import { type ChatRequest, reply } from '../test/support/fake-openai.js';
import type { SlackCall } from '../test/support/fake-slack.js';
import { sleep } from '../test/support/wait.js';
import { type BenchResult, median, quantile, type Row, target } from './report.js';
import { ANSWER, type Fakes, mentionRequest, startFakes } from './rig.js';

export interface TurnOverheadSize {
  turns: number;
}

/** One turn's two spans, in ms on the bench's clock. */
interface Spans {
  /** Event sent → the fake model receives the Chat Completions request. */
  beforeModel: number;
  /** The fake model starts its response → the fake Slack receives `chat.postMessage`. */
  afterModel: number;
}

/** The moments of the turn under way, all from `performance.now()` on the bench's main thread. */
interface Marks {
  modelRequest?: number;
  modelResponse?: number;
  slackPost?: number;
  posted?: () => void;
}

/** After a turn's post, how long the fakes must hear nothing before the next turn (the bot clears its status). */
const QUIET_MS = 20;
/**
 * How long the fake model takes before it answers. No real model answers in under a millisecond; with an
 * instant answer the bot's thread status call (which the floor does not make) would still be in flight when
 * the answer arrives and be timed as overhead of the answer's post.
 */
const MODEL_THINK_MS = 50;
const TURN_TIMEOUT_MS = 10_000;

/** A field of an object we do not own (a diagnostics-channel message, a parsed body), or undefined. */
function field(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = Reflect.get(current, key);
  }
  return current;
}

/**
 * Times turns from outside, on the bench's main thread, where the fakes and this code run (one clock): the
 * bench sends the signed event with `fetch`; Node's `http.server.request.start` channel (emitted just before
 * a server's `request` event) tells when the fake model receives the Chat Completions request and when the
 * fake Slack receives `chat.postMessage`; the fake model's handler tells when the model starts answering.
 */
function turnClock(fakes: Fakes) {
  let marks: Marks | undefined;
  let lastHeard = performance.now();
  const onRequest = (message: unknown) => {
    const now = performance.now();
    lastHeard = now;
    if (marks === undefined) return;
    const port = field(message, 'request', 'socket', 'localPort');
    const url = field(message, 'request', 'url');
    if (port === fakes.model.port && url === '/v1/chat/completions') marks.modelRequest ??= now;
    else if (port === fakes.slack.port && url === '/api/chat.postMessage' && marks.slackPost === undefined) {
      marks.slackPost = now;
      marks.posted?.();
    }
  };
  subscribe('http.server.request.start', onRequest);
  fakes.model.setHandler(async () => {
    await sleep(MODEL_THINK_MS);
    if (marks !== undefined) marks.modelResponse ??= performance.now();
    return reply.text(ANSWER);
  });

  /** Resolves once the fakes have heard nothing for `QUIET_MS`. */
  const quiet = async () => {
    const left = () => QUIET_MS - (performance.now() - lastHeard);
    while (left() > 0) await sleep(left());
  };

  return {
    /** One mention to `target` in a new thread; resolves once the answer is posted and all is quiet again. */
    async turn(target: BotProcess): Promise<Spans> {
      await quiet();
      const request = mentionRequest(`${target.url}/slack/events`, 'hello');
      const thread = field(JSON.parse(request.body ?? '{}'), 'event', 'ts');
      const current: Marks = {};
      let timer: NodeJS.Timeout | undefined;
      const posted = new Promise<void>((done, fail) => {
        current.posted = done;
        timer = setTimeout(
          () =>
            fail(new Error(`no chat.postMessage within ${TURN_TIMEOUT_MS} ms; output:\n${target.output()}`)),
          TURN_TIMEOUT_MS,
        );
      });
      marks = current;
      const sent = performance.now();
      const acked = fetch(request.url, {
        method: 'POST',
        headers: request.headers ?? {},
        body: request.body ?? null,
      }).then(async (response) => {
        await response.arrayBuffer();
        if (!response.ok) throw new Error(`the event was answered with HTTP ${response.status}`);
      });
      try {
        await Promise.all([posted, acked]);
        await quiet();
      } finally {
        clearTimeout(timer);
        marks = undefined;
      }
      const post = fakes.slack.callsTo('chat.postMessage').at(-1);
      if (post === undefined || post.params.thread_ts !== thread || post.params.text !== ANSWER)
        throw new Error(
          `the answer was not posted in thread ${String(thread)}; last post: ${JSON.stringify(post?.params)}; output:\n${target.output()}`,
        );
      const { modelRequest, modelResponse, slackPost } = current;
      if (modelRequest === undefined || modelResponse === undefined || slackPost === undefined)
        throw new Error('a turn is missing one of its timing points');
      return { beforeModel: modelRequest - sent, afterModel: slackPost - modelResponse };
    },
    stop() {
      unsubscribe('http.server.request.start', onRequest);
      fakes.model.setHandler(undefined);
    },
  };
}

const lastPost = (fakes: Fakes): SlackCall | undefined => fakes.slack.callsTo('chat.postMessage').at(-1);

/** The floor must send what the bot sends: the same Chat Completions body and the same post (but the thread). */
function checkSameWire(
  bot: { request?: ChatRequest | undefined; post?: SlackCall | undefined },
  fakes: Fakes,
): void {
  const request = fakes.model.requests.at(-1);
  if (!isDeepStrictEqual(request, bot.request))
    throw new Error(
      `the floor's model request differs from the bot's:\n${JSON.stringify(request)}\n${JSON.stringify(bot.request)}`,
    );
  const post = lastPost(fakes);
  // Each names its own thread and run.
  const withoutThread = (call: SlackCall | undefined) => {
    const metadata = call?.params.metadata as { event_payload?: Record<string, unknown> } | undefined;
    return {
      token: call?.token,
      params: {
        ...call?.params,
        thread_ts: undefined,
        metadata: { ...metadata, event_payload: { ...metadata?.event_payload, run_id: undefined } },
      },
    };
  };
  if (!isDeepStrictEqual(withoutThread(post), withoutThread(bot.post)))
    throw new Error(
      `the floor's chat.postMessage differs from the bot's:\n${JSON.stringify(post)}\n${JSON.stringify(bot.post)}`,
    );
}

function row(name: string, bot: number[], floor: number[]): Row {
  return {
    case: name,
    metrics: {
      turns: bot.length,
      'bot median ms': median(bot),
      'bot p99 ms': quantile(bot, 0.99),
      'floor median ms': median(floor),
      'floor p99 ms': quantile(floor, 0.99),
      'median ratio': ratio(bot, floor),
      'p99 ratio': quantile(bot, 0.99) / Math.max(quantile(floor, 0.99), 1e-6),
    },
  };
}

const ratio = (bot: number[], floor: number[]) => median(bot) / Math.max(median(floor), 1e-6);

/**
 * Bot overhead per turn with a model that answers after `MODEL_THINK_MS`, next to a floor process timed the same way: the
 * bot as `npm start` runs it (its own process, its default worker threads) and bench/turn-floor.ts, one
 * mention at a time, each in a new thread, turns of the two alternating.
 */
export async function benchTurnOverhead(size: TurnOverheadSize): Promise<BenchResult> {
  const fakes = await startFakes();
  const clock = turnClock(fakes);
  let bot: BotProcess | undefined;
  let floor: BotProcess | undefined;
  const spans = { bot: [] as Spans[], floor: [] as Spans[] };
  try {
    // Started together; the floor reads the request file on its first event, written before it.
    const requestFile = join(fakes.dir, 'turn-floor-request.json');
    const { SLACK_BOT_TOKEN, SLACK_SIGNING_SECRET, SLACK_API_URL, OPENAI_API_KEY, OPENAI_BASE_URL } =
      fakes.env;
    const started = await Promise.allSettled([
      startBotProcess({ env: fakes.env }),
      startBotProcess({
        env: {
          SLACK_BOT_TOKEN,
          SLACK_SIGNING_SECRET,
          SLACK_API_URL,
          OPENAI_API_KEY,
          OPENAI_BASE_URL,
          TURN_FLOOR_REQUEST: requestFile,
        },
        entry: fileURLToPath(new URL('./turn-floor.ts', import.meta.url)),
      }),
    ]);
    [bot, floor] = started.map((s) => (s.status === 'fulfilled' ? s.value : undefined));
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    if (bot === undefined || floor === undefined) throw new Error('unreachable: both processes started');
    // The bot's first turn gives the Chat Completions body the floor sends.
    await clock.turn(bot);
    const sent = { request: fakes.model.requests.at(-1), post: lastPost(fakes) };
    writeFileSync(requestFile, JSON.stringify(sent.request));
    await clock.turn(floor);
    checkSameWire(sent, fakes);
    const warmup = Math.min(20, size.turns);
    for (let turn = 0; turn < warmup + size.turns; turn++) {
      const botSpans = await clock.turn(bot);
      const floorSpans = await clock.turn(floor);
      if (turn < warmup) continue;
      spans.bot.push(botSpans);
      spans.floor.push(floorSpans);
    }
  } finally {
    clock.stop();
    await Promise.all([floor?.kill('SIGTERM'), bot?.kill('SIGTERM')]);
    await fakes.close();
  }
  const before = (s: Spans[]) => s.map((t) => t.beforeModel);
  const after = (s: Spans[]) => s.map((t) => t.afterModel);
  const all = [...spans.bot, ...spans.floor].flatMap((t) => [t.beforeModel, t.afterModel]);
  if (all.some((v) => !Number.isFinite(v) || v < 0)) throw new Error('a turn has a negative or missing span');
  const workers = process.env.BENCH_WORKERS
    ? `WORKERS=${process.env.BENCH_WORKERS} from BENCH_WORKERS`
    : "the bot's default WORKERS";
  return {
    id: 'turn-overhead',
    title: `Bot overhead per turn vs a floor process (model answers after ${MODEL_THINK_MS} ms; timed from outside)`,
    rows: [
      row('event → model request', before(spans.bot), before(spans.floor)),
      row('model response → Slack post', after(spans.bot), after(spans.floor)),
    ],
    targets: [
      target(
        'event → model request, median bot / floor',
        ratio(before(spans.bot), before(spans.floor)),
        2,
        '×',
      ),
      target(
        'model response → Slack post, median bot / floor',
        ratio(after(spans.bot), after(spans.floor)),
        2,
        '×',
      ),
    ],
    notes: [
      `the bot runs as npm start runs it (its own process, ${workers}, SQLite); the floor (bench/turn-floor.ts) is a Node process that reads the body, checks the Slack signature, parses the JSON, answers 200, sends the same Chat Completions request with fetch (checked equal to the bot's) and posts the answer with the same chat.postMessage form body`,
      `all times on the bench's main thread, where the fakes run: event → model request = the fake model receives the request (http.server.request.start) minus the bench's fetch of the signed event; model response → Slack post = the fake Slack receives chat.postMessage minus the fake model's handler returning its reply`,
      `the fake model answers ${MODEL_THINK_MS} ms after it receives a request, for bot and floor alike (no real model answers sooner); with an instant answer the bot's thread status call, which the floor does not make, is still in flight when the answer arrives (median ratio about 2.1× on this machine)`,
      `one mention at a time, each in a new thread, bot and floor turns alternating; each turn starts after ${QUIET_MS} ms in which the fakes heard nothing; ${Math.min(20, spans.bot.length)} warm-up turns each`,
    ],
  };
}
