import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BotProcess, runBotProcessToExit, startBotProcess } from '../support/bot-process.js';
import { type FakeOpenAI, reply, startFakeOpenAI } from '../support/fake-openai.js';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import {
  appMentionEvent,
  eventEnvelope,
  nextTs,
  postEvent,
  postInteraction,
} from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { approvalIdOf, cardTs, isApprovalCard, SECRET } from './harness.js';

function storedCardTs(path: string): unknown {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    const row = db.prepare('SELECT message_ts AS ts FROM approvals').get();
    return row && typeof row === 'object' && 'ts' in row ? row.ts : undefined;
  } finally {
    db.close();
  }
}

describe('the real entry point as a child process', () => {
  let slack: FakeSlack;
  let model: FakeOpenAI;
  let dir: string;
  let bot: BotProcess | undefined;

  beforeEach(async () => {
    slack = await startFakeSlack();
    model = await startFakeOpenAI();
    dir = mkdtempSync(join(tmpdir(), 'bot-restart-'));
  });
  afterEach(async () => {
    await bot?.kill();
    await slack.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const env = () => ({
    SLACK_BOT_TOKEN: 'xoxb-restart-test',
    SLACK_SIGNING_SECRET: SECRET,
    SLACK_API_URL: slack.url,
    OPENAI_API_KEY: 'sk-restart-test',
    OPENAI_BASE_URL: model.baseURL,
    DATABASE_PATH: join(dir, 'data', 'bot.db'),
    LOG_LEVEL: 'info',
    // The answers are read from chat.postMessage below, so they are posted, not streamed.
    OPENAI_STREAM: 'false',
  });

  it('a card survives SIGKILL: after a restart the click completes the run, and the tool ran once', async () => {
    bot = await startBotProcess({ env: env() });
    model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'survives' } }]));
    const ts = nextTs();
    await postEvent(
      `${bot.url}/slack/events`,
      SECRET,
      eventEnvelope(appMentionEvent({ user: 'U1', channel: 'C1', text: '<@UBOT> note', ts })),
    );
    const card = await slack.waitForCall('chat.postMessage', isApprovalCard, 10_000);
    // The card's ts is stored right after Slack answers; kill once it is, as a crash while the card waits.
    await waitUntil(() => storedCardTs(join(dir, 'data', 'bot.db')) === cardTs(card), { timeoutMs: 10_000 });
    expect(await bot.kill('SIGKILL')).toBeNull();
    expect(statSync(join(dir, 'data', 'bot.db')).mode & 0o777).toBe(0o600);

    bot = await startBotProcess({ env: env() });
    model.enqueue(reply.text('The note survived the restart.'));
    const click = blockActionsPayload({
      userId: 'U2',
      channelId: 'C1',
      messageTs: cardTs(card),
      threadTs: ts,
      actionId: 'approval:approve',
      value: approvalIdOf(card),
    });
    const response = await postInteraction(`${bot.url}/slack/events`, SECRET, click);
    expect(response.status).toBe(200);
    const answer = await slack.waitForCall(
      'chat.postMessage',
      (call) => call.params.text === 'The note survived the restart.',
      10_000,
    );
    expect(answer.params.thread_ts).toBe(ts);
    const update = await slack.waitForCall('chat.update');
    expect(update.params.ts).toBe(cardTs(card));

    await bot.kill('SIGTERM');
    const db = new Database(join(dir, 'data', 'bot.db'), { readonly: true });
    const notes = db.prepare('SELECT text FROM notes').all();
    const approvals = db.prepare('SELECT status FROM approvals').all();
    db.close();
    expect(notes).toEqual([{ text: 'survives' }]);
    expect(approvals).toEqual([{ status: 'executed' }]);
    expect(bot.output()).not.toContain('xoxb-restart-test');
    expect(bot.output()).not.toContain('sk-restart-test');
  });

  it('start-up with missing settings lists every problem and exits 1 without a stack trace', async () => {
    const result = await runBotProcessToExit({
      env: { DATABASE_PATH: join(dir, 'x.db'), ADMIN_USER_IDS: 'not-an-id' },
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('SLACK_BOT_TOKEN');
    expect(result.stderr).toContain('ADMIN_USER_IDS');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
