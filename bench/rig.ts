import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { approvalIdOf, cardTs, isApprovalCard } from '../test/e2e/harness.js';
import { type FakeOpenAI, reply, startFakeOpenAI } from '../test/support/fake-openai.js';
import { type FakeSlack, type SlackCall, startFakeSlack } from '../test/support/fake-slack.js';
import { blockActionsPayload } from '../test/support/slack-payloads.js';
import { appMentionEvent, eventEnvelope, nextTs } from '../test/support/slack-requests.js';
import { waitUntil } from '../test/support/wait.js';
import { type LoadGenerator, type PreparedRequest, signedRequest, startLoadGenerator } from './load.js';

export const SECRET = 'bench-signing-secret';
export const ANSWER = 'Done.';

/** The fakes, a scratch folder and a load generator; the bot runs as a child process against them. */
export interface Fakes {
  slack: FakeSlack;
  model: FakeOpenAI;
  load: LoadGenerator;
  dir: string;
  /** The environment a bot needs to run against the fakes. */
  env: Record<string, string>;
  close(): Promise<void>;
}

export async function startFakes(): Promise<Fakes> {
  const slack = await startFakeSlack();
  const model = await startFakeOpenAI();
  const load = startLoadGenerator();
  const dir = mkdtempSync(join(tmpdir(), 'bot-bench-'));
  const env = {
    SLACK_BOT_TOKEN: 'xoxb-bench-token',
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slack.url,
    OPENAI_API_KEY: 'sk-bench',
    OPENAI_BASE_URL: model.baseURL,
    DATABASE_PATH: join(dir, 'bot.db'),
    LOG_LEVEL: 'warn',
    // Answers as one chat.postMessage, so "model response → Slack post" has one clear end point.
    OPENAI_STREAM: 'false',
    // The bot's worker threads (see the README); by default the bot's own default.
    ...(process.env.BENCH_WORKERS ? { WORKERS: process.env.BENCH_WORKERS } : {}),
  };
  return {
    slack,
    model,
    load,
    dir,
    env,
    async close() {
      await load.close();
      await slack.close();
      await model.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The model asks for `create_note` (which needs an approval) and answers once the tool output is in. */
export function scriptApprovalFlow(model: FakeOpenAI): void {
  model.setHandler((request) =>
    request.messages.at(-1)?.role === 'tool'
      ? reply.text(ANSWER)
      : reply.toolCalls([{ name: 'create_note', arguments: { text: 'benchmark note' } }]),
  );
}

/** A signed `app_mention` that starts a new thread. */
export function mentionRequest(url: string, text: string): PreparedRequest {
  const event = appMentionEvent({ user: 'U1', channel: 'C1', text: `<@UBOT> ${text}`, ts: nextTs() });
  return signedRequest(url, SECRET, JSON.stringify(eventEnvelope(event)), 'application/json');
}

/** A signed Approve click on `card` by U2 (allowed to decide `create_note` in the conversation). */
export function clickRequest(url: string, card: SlackCall): PreparedRequest {
  const payload = blockActionsPayload({
    userId: 'U2',
    channelId: String(card.params.channel),
    messageTs: cardTs(card),
    threadTs: String(card.params.thread_ts),
    actionId: 'approval:approve',
    value: approvalIdOf(card),
  });
  return signedRequest(url, SECRET, new URLSearchParams({ payload: JSON.stringify(payload) }).toString());
}

function isCard(call: SlackCall): boolean {
  return call.method === 'chat.postMessage' && isApprovalCard(call);
}

/** Threads that got the final answer; a thread counts once, however often its answer was posted. */
const answers = (slack: FakeSlack) =>
  new Set(
    slack.calls
      .filter((c) => c.method === 'chat.postMessage' && c.params.text === ANSWER)
      .map((c) => String(c.params.thread_ts)),
  ).size;

/** The first card of each approval among `calls`, in order: a card posted twice still asks one decision. */
function distinctCards(calls: readonly SlackCall[]): SlackCall[] {
  const seen = new Set<string>();
  return calls.filter((call) => {
    if (!isCard(call)) return false;
    const id = approvalIdOf(call);
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}

/**
 * Starts `count` threads that each pause on an approval; resolves with one card per new approval once all
 * are posted (distinct approvals: the bot may post a card twice, and a second click on it decides nothing).
 * Several URLs (one per bot process) get the mentions in turn.
 */
export async function pauseThreads(
  fakes: Fakes,
  url: string | readonly string[],
  count: number,
  batch = 50,
): Promise<SlackCall[]> {
  const urls = typeof url === 'string' ? [url] : url;
  const before = new Set(distinctCards(fakes.slack.calls).map(approvalIdOf));
  for (let sent = 0; sent < count; sent += batch) {
    const size = Math.min(batch, count - sent);
    await fakes.load.fire(
      Array.from({ length: size }, (_, i) =>
        mentionRequest(urls[(sent + i) % urls.length] ?? '', 'add a note'),
      ),
    );
  }
  return waitUntil(
    () => {
      const cards = distinctCards(fakes.slack.calls).filter((card) => !before.has(approvalIdOf(card)));
      return cards.length >= count ? cards : undefined;
    },
    { timeoutMs: 120_000, message: `expected ${count} approval cards` },
  );
}

/** Waits until `count` threads in total have got their final answer. */
export function waitForAnswers(fakes: Fakes, count: number): Promise<true> {
  return waitUntil(() => answers(fakes.slack) >= count, {
    timeoutMs: 120_000,
    message: `expected ${count} answers`,
  });
}
