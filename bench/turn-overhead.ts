import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { reply } from '../test/support/fake-openai.js';
import { waitUntil } from '../test/support/wait.js';
import { type BenchResult, median, quantile, target } from './report.js';
import { ANSWER, mentionRequest, startFakes, startInProcessBot } from './rig.js';

export interface TurnOverheadSize {
  turns: number;
}

type Point = 'event' | 'modelRequest' | 'modelResponse' | 'slackPost';

/** A field of a diagnostics-channel message (objects owned by Node's http and undici), or undefined. */
function field(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = Reflect.get(current, key);
  }
  return current;
}

/**
 * Timestamps the four points of a turn inside the bot's process through Node's built-in diagnostics
 * channels, so the product needs no instrumentation: the HTTP request of the event arrives
 * (`http.server.request.start`), the model request's headers are written and the model response's headers
 * arrive (undici, which backs `fetch` in `openai` and `@slack/web-api`), and the `chat.postMessage` request is
 * written. Costs nothing while nobody subscribes.
 */
function recordPoints(modelOrigin: string) {
  const marks: { point: Point; at: number }[] = [];
  const isModel = (m: unknown) =>
    field(m, 'request', 'origin') === modelOrigin &&
    String(field(m, 'request', 'path')).endsWith('/chat/completions');
  const isPost = (m: unknown) => String(field(m, 'request', 'path')).endsWith('/chat.postMessage');
  const handlers: [string, (message: unknown) => void][] = [
    [
      'http.server.request.start',
      (m) => {
        if (field(m, 'request', 'url') === '/slack/events')
          marks.push({ point: 'event', at: performance.now() });
      },
    ],
    [
      'undici:client:sendHeaders',
      (m) => {
        if (isModel(m)) marks.push({ point: 'modelRequest', at: performance.now() });
        else if (isPost(m)) marks.push({ point: 'slackPost', at: performance.now() });
      },
    ],
    [
      'undici:request:headers',
      (m) => {
        if (isModel(m)) marks.push({ point: 'modelResponse', at: performance.now() });
      },
    ],
  ];
  for (const [name, handler] of handlers) subscribe(name, handler);
  return {
    marks,
    stop: () => {
      for (const [name, handler] of handlers) unsubscribe(name, handler);
    },
  };
}

/** Bot overhead per turn with a model that answers at once: one mention at a time, each in a new thread. */
export async function benchTurnOverhead(size: TurnOverheadSize): Promise<BenchResult> {
  const fakes = await startFakes();
  const { bot, url } = await startInProcessBot(fakes);
  const recorder = recordPoints(new URL(fakes.model.baseURL).origin);
  const before: number[] = [];
  const after: number[] = [];
  try {
    fakes.model.setHandler(() => reply.text(ANSWER));
    const warmup = Math.min(20, size.turns);
    for (let turn = 0; turn < warmup + size.turns; turn++) {
      recorder.marks.length = 0;
      await fakes.load.fire([mentionRequest(url, 'hello')]);
      await waitUntil(() => recorder.marks.some((m) => m.point === 'slackPost'), {
        timeoutMs: 10_000,
        intervalMs: 1,
        message: 'expected the answer to be posted',
      });
      const at = (point: Point) => recorder.marks.find((m) => m.point === point)?.at ?? Number.NaN;
      if (turn < warmup) continue;
      before.push(at('modelRequest') - at('event'));
      after.push(at('slackPost') - at('modelResponse'));
    }
  } finally {
    recorder.stop();
    await bot.stop(5000);
    await fakes.close();
  }
  if ([...before, ...after].some((v) => !Number.isFinite(v) || v < 0))
    throw new Error('a turn is missing one of its timing points');
  return {
    id: 'turn-overhead',
    title: 'Bot overhead per turn (model answers at once; timestamps inside the process)',
    rows: [
      {
        case: 'event → model request',
        metrics: { turns: before.length, 'median ms': median(before), 'p99 ms': quantile(before, 0.99) },
      },
      {
        case: 'model response → Slack post',
        metrics: { turns: after.length, 'median ms': median(after), 'p99 ms': quantile(after, 0.99) },
      },
    ],
    targets: [
      target('event → model request, median', median(before), 2, 'ms'),
      target('model response → Slack post, median', median(after), 2, 'ms'),
    ],
    notes: [
      'points: HTTP request of the event arrives; model request headers written; model response headers arrive; chat.postMessage headers written (Node diagnostics channels, no product instrumentation)',
    ],
  };
}
