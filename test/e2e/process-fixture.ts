import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { DatabaseConfig } from '../../src/config.js';
import { type BotProcess, startBotProcess } from '../support/bot-process.js';
import { type FakeOpenAI, reply, startFakeOpenAI } from '../support/fake-openai.js';
import { type FakeSlack, type SlackCall, startFakeSlack } from '../support/fake-slack.js';
import { seenMessages } from '../support/slack-messages.js';
import {
  appMentionEvent,
  eventEnvelope,
  nextTs,
  postEvent,
  postInteraction,
} from '../support/slack-requests.js';
import { type DatabaseKind, freshDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { cardClick, isApprovalCard, SECRET } from './harness.js';

export const ADMIN = 'UADMIN';

/**
 * The real entry point as a child process against fakes that outlive it, on one database file: start it,
 * kill it at any moment, start it again, and look at what Slack saw and what the database holds.
 */
export interface ProcessFixture {
  slack: FakeSlack;
  model: FakeOpenAI;
  /** The bot's database, shared by every process the fixture starts. */
  database: DatabaseConfig;
  /** The SQLite file (for checks on the file itself), when the database is SQLite. */
  dbPath: string;
  env: Record<string, string>;
  start(extraEnv?: Record<string, string>): Promise<BotProcess>;
  mention(bot: BotProcess, text: string, user?: string): Promise<string>;
  click(bot: BotProcess, card: SlackCall, action: 'approve' | 'reject', user: string): Promise<Response>;
  waitForCards(count: number): Promise<SlackCall[]>;
  waitForText(predicate: (text: string) => boolean): Promise<string>;
  texts(): string[];
  /** Rows of `sql` (with `?` placeholders, valid on both engines) read from the bot's database. */
  query(sql: string, ...params: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

export interface ProcessFixtureOptions {
  /** The engine of the database the processes share; default SQLite (a file in the fixture's folder). */
  kind?: DatabaseKind;
}

export async function startProcessFixture(options: ProcessFixtureOptions = {}): Promise<ProcessFixture> {
  const slack = await startFakeSlack();
  const model = await startFakeOpenAI();
  const dir = mkdtempSync(join(tmpdir(), 'bot-process-'));
  const dbPath = join(dir, 'bot.db');
  const postgres = options.kind === 'postgres' ? await freshDatabase('postgres') : undefined;
  const database: DatabaseConfig = postgres?.config ?? { kind: 'sqlite', path: dbPath };
  const env: Record<string, string> = {
    SLACK_BOT_TOKEN: 'xoxb-test-token',
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slack.url,
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: model.baseURL,
    ...(postgres?.env ?? { DATABASE_PATH: dbPath }),
    ADMIN_USER_IDS: ADMIN,
    LOG_LEVEL: 'info',
    // Answers are read from chat.postMessage, so they are posted, not streamed.
    OPENAI_STREAM: 'false',
  };
  const bots: BotProcess[] = [];
  const texts = () =>
    seenMessages(slack.calls)
      .filter((message) => message.finished)
      .map((message) => message.text);
  const events = (bot: BotProcess) => `${bot.url}/slack/events`;
  return {
    slack,
    model,
    database,
    dbPath,
    env,
    async start(extraEnv = {}) {
      const bot = await startBotProcess({ env: { ...env, ...extraEnv } });
      bots.push(bot);
      return bot;
    },
    async mention(bot, text, user = 'U1') {
      const ts = nextTs();
      const event = appMentionEvent({ user, channel: 'C1', text: `<@UBOT> ${text}`, ts });
      const response = await postEvent(events(bot), SECRET, eventEnvelope(event));
      if (response.status !== 200) throw new Error(`event answered ${response.status}`);
      return ts;
    },
    click: (bot, card, action, user) => postInteraction(events(bot), SECRET, cardClick(card, action, user)),
    waitForCards(count) {
      return waitUntil(
        () => {
          const cards = slack.callsTo('chat.postMessage').filter(isApprovalCard);
          return cards.length >= count ? cards : undefined;
        },
        { timeoutMs: 15_000, message: `expected ${count} approval cards` },
      );
    },
    waitForText(predicate) {
      return waitUntil(() => texts().find(predicate), {
        timeoutMs: 15_000,
        message: `expected a thread message; got ${JSON.stringify(texts())}`,
      });
    },
    texts,
    query: (sql, ...params) => rows(database, sql, ...params),
    async close() {
      await Promise.all(bots.map((bot) => bot.kill()));
      await slack.close();
      await model.close();
      await postgres?.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export interface Latch {
  wait: Promise<void>;
  open(): void;
}

/** A latch for fake handlers: calls wait on it until the test opens it. */
export function latch(): Latch {
  let open = () => {};
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

/** The channel `approveSlowPost` posts to; its `chat.postMessage` calls wait on the latch. */
export const SLOW_CHANNEL = 'C0002';

/**
 * Gets an approved `post_message` running and stuck: the model asks for it, an admin approves, and the
 * tool's `chat.postMessage` to `SLOW_CHANNEL` waits until `held` opens. `answer` is the model's next reply.
 */
export async function approveSlowPost(
  f: ProcessFixture,
  bot: BotProcess,
  held: { wait: Promise<void> },
  answer: string,
): Promise<void> {
  f.slack.setResponse('chat.postMessage', async (params) => {
    if (params.channel === SLOW_CHANNEL) await held.wait;
    return f.slack.defaultReply('chat.postMessage', params);
  });
  f.model.enqueue(
    reply.toolCalls([{ name: 'post_message', arguments: { channel: SLOW_CHANNEL, text: 'news' } }]),
    reply.text(answer),
  );
  await f.mention(bot, `post the news in ${SLOW_CHANNEL}`);
  const [card] = await f.waitForCards(1);
  if (!card) throw new Error('no card');
  await f.click(bot, card, 'approve', ADMIN);
  await f.slack.waitForCall('chat.postMessage', (call) => call.params.channel === SLOW_CHANNEL);
}

/** A fresh fixture and latch for every test of the calling suite; the latch is opened before the fixture closes. */
export function useProcessFixture(
  use: (fixture: ProcessFixture, held: Latch) => void,
  options: ProcessFixtureOptions = {},
): void {
  let current: { fixture: ProcessFixture; held: Latch } | undefined;
  beforeEach(async () => {
    current = { fixture: await startProcessFixture(options), held: latch() };
    use(current.fixture, current.held);
  });
  afterEach(async () => {
    current?.held.open();
    await current?.fixture.close();
  });
}
