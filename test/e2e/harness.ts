import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadApprovalPolicy } from '../../src/approvals/policy-file.js';
import { type Bot, type BotOverrides, createBot } from '../../src/compose/bot.js';
import { type DatabaseConfig, loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createOpenAIModel } from '../../src/model/openai/openai-client.js';
import { SYSTEM_PROMPT } from '../../src/slack/system-prompt.js';
import { toolNames } from '../../src/tools/built-in-tools.js';
import { type FakeOpenAI, startFakeOpenAI } from '../support/fake-openai.js';
import { type FakeSlack, type SlackCall, startFakeSlack } from '../support/fake-slack.js';
import { FAKE_BOT_ID, FAKE_BOT_USER_ID } from '../support/fake-slack-replies.js';
import { type SeenMessage, seenMessages } from '../support/slack-messages.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import {
  appMentionEvent,
  eventEnvelope,
  messageEvent,
  nextTs,
  postEvent,
  postInteraction,
  postSlashCommand,
  slashCommandBody,
} from '../support/slack-requests.js';
import { placeMigratedSqlite } from '../support/sqlite-template.js';
import { type DatabaseKind, type FreshDatabase, freshDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';

export const SECRET = 'test-signing-secret';

export interface Harness {
  slack: FakeSlack;
  model: FakeOpenAI;
  bot: Bot;
  url: string;
  /** The bot's database (SQLite unless the harness was started with `database: 'postgres'`). */
  database: DatabaseConfig;
  /** The SQLite file, when the database is SQLite. */
  dbPath: string;
  logs: string[];
  /**
   * Mentions the bot in a channel (a new thread unless `threadTs`), from workspace `teamId` (default `T1`);
   * resolves with the message ts.
   */
  mention(
    text: string,
    options?: { user?: string; channel?: string; threadTs?: string; eventId?: string; teamId?: string },
  ): Promise<string>;
  /** A plain message: a thread reply in a channel, or a DM with `channelType: 'im'`. */
  message(
    text: string,
    options: { user?: string; channel?: string; threadTs?: string; channelType?: 'channel' | 'im' },
  ): Promise<string>;
  /** `user` clicks one of a card's buttons, from workspace `teamId` (default `T1`). */
  click(
    card: SlackCall,
    action: 'approve' | 'approve_thread' | 'edit' | 'reject',
    user: string,
    teamId?: string,
  ): Promise<Response>;
  /** Runs `/approvals text` as `user`; resolves with what the bot sent to the command's response_url. */
  approvals(text: string, user: string): Promise<SlackCall>;
  /** Sends any event in a signed envelope. */
  sendEvent(event: Record<string, unknown> & { type: string }, eventId?: string): Promise<void>;
  /** Approval cards posted so far (chat.postMessage calls with decision buttons). */
  cards(): SlackCall[];
  waitForCards(count: number): Promise<SlackCall[]>;
  /** Thread messages posted so far, cards excepted: plain texts and answers, streamed ones once finished. */
  texts(): string[];
  /** The same messages with where and how they were posted (stream or post). */
  messages(): SeenMessage[];
  waitForText(predicate: (text: string) => boolean): Promise<string>;
  close(): Promise<void>;
}

export function approvalIdOf(card: SlackCall): string {
  const blocks = card.params.blocks;
  if (!Array.isArray(blocks)) throw new Error('card has no blocks');
  for (const block of blocks) {
    if (block && typeof block === 'object' && 'elements' in block && Array.isArray(block.elements)) {
      for (const element of block.elements) {
        if (element && typeof element === 'object' && 'value' in element && typeof element.value === 'string')
          return element.value;
      }
    }
  }
  throw new Error('card has no button value');
}

/** A chat.postMessage of an approval card (it carries decision buttons), not an answer with blocks. */
export function isApprovalCard(call: SlackCall): boolean {
  try {
    approvalIdOf(call);
    return true;
  } catch {
    return false;
  }
}

export interface HarnessOptions {
  env?: Record<string, string>;
  overrides?: BotOverrides;
  /** A SQLite file to use (to start a second bot on the first one's database). */
  dbPath?: string;
  /** A database to use, e.g. one a previous harness used; by default a fresh one of `kind`. */
  database?: FreshDatabase;
  /** The engine of the fresh database; default SQLite. */
  kind?: DatabaseKind;
  /** The model client's own retries (429, 5xx, timeouts); default 0, production 2. */
  modelRetries?: number;
  /** A fake Slack to share with other harnesses (bots of one deployment); the caller closes it. */
  slack?: FakeSlack;
}

export async function startHarness(options: HarnessOptions = {}): Promise<Harness> {
  const slack = options.slack ?? (await startFakeSlack());
  const model = await startFakeOpenAI();
  const dir = mkdtempSync(join(tmpdir(), 'bot-e2e-'));
  const dbPath = options.dbPath ?? join(dir, 'bot.db');
  const fresh =
    options.database ?? (options.kind === 'postgres' ? await freshDatabase('postgres') : undefined);
  const loaded = loadConfig({
    SLACK_BOT_TOKEN: 'xoxb-test-token',
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slack.url,
    OPENAI_API_KEY: 'sk-test',
    OPENAI_BASE_URL: model.baseURL,
    DATABASE_PATH: dbPath,
    ...fresh?.env,
    PORT: '0',
    LOG_LEVEL: 'warn',
    // In this test's process: its overrides (model, clock, tools) reach this thread only.
    WORKERS: '0',
    ...options.env,
  });
  if (!loaded.ok) throw new Error(loaded.problems.join('\n'));
  if (loaded.config.database.kind === 'sqlite') await placeMigratedSqlite(loaded.config.database.path);
  const logs: string[] = [];
  const logger = createLogger('debug', (line) => logs.push(line));
  const policy = loadApprovalPolicy(loaded.config.approvalPolicyFile, toolNames());
  if (!policy.ok) throw new Error(policy.problems.join('\n'));
  const bot = await createBot(loaded.config, logger, policy.policy, {
    model: createOpenAIModel({
      ...loaded.config.openai,
      systemPrompt: SYSTEM_PROMPT,
      maxRetries: options.modelRetries ?? 0,
      timeoutMs: 5000,
      logger,
    }),
    retryConfig: { retries: 0 },
    // Who the token belongs to, as start-up's token check tells the bot: Bolt then asks Slack nothing itself.
    slackIdentity: { botId: FAKE_BOT_ID, botUserId: FAKE_BOT_USER_ID },
    ...options.overrides,
  });
  const { port } = await bot.start();
  const url = `http://127.0.0.1:${port}/slack/events`;
  const send = async (
    event: Record<string, unknown> & { type: string },
    eventId?: string,
    teamId?: string,
  ) => {
    const envelope = eventEnvelope(event, { ...(eventId ? { eventId } : {}), ...(teamId ? { teamId } : {}) });
    const response = await postEvent(url, SECRET, envelope);
    if (response.status !== 200) throw new Error(`event answered ${response.status}`);
  };
  // Answers may be streamed or posted as markdown blocks; both count once they are complete.
  const texts = () =>
    seenMessages(slack.calls)
      .filter((m) => m.finished)
      .map((m) => m.text);
  return {
    slack,
    model,
    bot,
    url,
    database: loaded.config.database,
    dbPath,
    logs,
    sendEvent: send,
    async mention(text, o = {}) {
      const ts = nextTs();
      await send(
        appMentionEvent({
          user: o.user ?? 'U1',
          channel: o.channel ?? 'C1',
          text: `<@UBOT> ${text}`,
          ts,
          ...(o.threadTs ? { threadTs: o.threadTs } : {}),
          ...(o.teamId ? { team: o.teamId } : {}),
        }),
        o.eventId,
        o.teamId,
      );
      return ts;
    },
    async message(text, o) {
      const ts = nextTs();
      await send(
        messageEvent({
          user: o.user ?? 'U1',
          channel: o.channel ?? 'C1',
          text,
          ts,
          channelType: o.channelType ?? 'channel',
          ...(o.threadTs ? { threadTs: o.threadTs } : {}),
        }),
      );
      return ts;
    },
    click: (card, action, user, teamId) =>
      postInteraction(url, SECRET, cardClick(card, action, user, teamId)),
    async approvals(text, user) {
      const id = randomUUID();
      const fields = slashCommandBody({
        command: '/approvals',
        text,
        userId: user,
        channelId: 'C1',
        responseUrl: slack.responseUrl(id),
      });
      const response = await postSlashCommand(url, SECRET, fields);
      if (response.status !== 200) throw new Error(`/approvals answered ${response.status}`);
      return slack.waitForCall('response_url', (c) => c.params.responseUrlId === id);
    },
    cards: () => slack.callsTo('chat.postMessage').filter(isApprovalCard),
    async waitForCards(count) {
      return waitUntil(
        () => {
          const cards = slack.callsTo('chat.postMessage').filter(isApprovalCard);
          return cards.length >= count ? cards : undefined;
        },
        { timeoutMs: 10_000, message: `expected ${count} approval cards` },
      );
    },
    texts,
    messages: () => seenMessages(slack.calls),
    waitForText(predicate) {
      return waitUntil(() => texts().find(predicate), {
        timeoutMs: 10_000,
        message: 'expected a thread message',
      });
    },
    async close() {
      await bot.stop(2000);
      if (!options.slack) await slack.close();
      await model.close();
      // A database handed in belongs to the caller, who may start another harness on it.
      if (fresh && !options.database) await fresh.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The block_actions payload of `user` clicking one of a posted card's buttons (from workspace `teamId`, default T1). */
export function cardClick(
  card: SlackCall,
  action: string,
  user: string,
  teamId?: string,
): Record<string, unknown> {
  return blockActionsPayload({
    ...(teamId ? { teamId } : {}),
    userId: user,
    channelId: String(card.params.channel),
    messageTs: cardTs(card),
    threadTs: String(card.params.thread_ts),
    actionId: `approval:${action}`,
    value: approvalIdOf(card),
  });
}

/** The ts the fake Slack answered for a posted card. */
export function cardTs(card: SlackCall): string {
  const reply = card.reply;
  const ts = reply && typeof reply === 'object' && 'ts' in reply ? reply.ts : undefined;
  if (typeof ts !== 'string') throw new Error('the fake did not record the ts of the card');
  return ts;
}
