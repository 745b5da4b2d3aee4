import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BotProcess, startBotProcess } from '../../support/bot-process.js';
import { signInWithLink } from '../../support/console-client.js';
import { type FakeOpenAI, reply, startFakeOpenAI } from '../../support/fake-openai.js';
import { type FakeSlack, startFakeSlack } from '../../support/fake-slack.js';
import { appMentionEvent, eventEnvelope, nextTs, postEvent } from '../../support/slack-requests.js';
import { rows } from '../db-rows.js';
import { approvalIdOf, isApprovalCard, SECRET } from '../harness.js';

/**
 * The console of the bot `npm start` runs, with a worker thread: a decision made on the web is followed up
 * in the worker (card updated, run resumed), as a click's is.
 */
describe('web console of the real bot process', () => {
  let slack: FakeSlack;
  let model: FakeOpenAI;
  let dir: string;
  let bot: BotProcess | undefined;

  beforeEach(async () => {
    slack = await startFakeSlack();
    model = await startFakeOpenAI();
    dir = mkdtempSync(join(tmpdir(), 'bot-console-'));
  });
  afterEach(async () => {
    await bot?.kill();
    await slack.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('an admin approves on the web; the worker updates the card and the run answers', async () => {
    const env = { DATABASE_PATH: join(dir, 'bot.db'), ADMIN_USER_IDS: 'UADMIN' };
    bot = await startBotProcess({
      env: {
        ...env,
        SLACK_BOT_TOKEN: 'xoxb-console',
        SLACK_SIGNING_SECRET: SECRET,
        SLACK_API_URL: slack.url,
        OPENAI_API_KEY: 'sk-console',
        OPENAI_BASE_URL: model.baseURL,
        OPENAI_STREAM: 'false',
        WORKERS: '1',
        LOG_LEVEL: 'warn',
      },
    });
    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'from the web' } }]),
      reply.text('Noted from the web.'),
    );
    const ts = nextTs();
    const sent = await postEvent(
      `${bot.url}/slack/events`,
      SECRET,
      eventEnvelope(appMentionEvent({ user: 'U1', channel: 'C1', text: '<@UBOT> add a note', ts })),
    );
    expect(sent.status).toBe(200);
    const card = await slack.waitForCall('chat.postMessage', isApprovalCard, 10_000);
    const id = approvalIdOf(card);

    const admin = await signInWithLink(bot.url, env, 'UADMIN');
    const decided = await admin.postJson(`/console/api/approvals/${id}/decision`, { decision: 'approve' });
    expect(decided.status).toBe(200);
    await slack.waitForCall('chat.postMessage', (c) => c.params.text === 'Noted from the web.', 10_000);
    const update = await slack.waitForCall('chat.update', undefined, 10_000);
    expect(JSON.stringify(update.params.blocks)).toContain('Approved by <@UADMIN>');
    const approved = await rows(
      env.DATABASE_PATH,
      "select payload from audit_events where kind = 'approval.approved'",
    );
    expect(JSON.parse(String(approved[0]?.payload)).surface).toBe('web');
  });
});
