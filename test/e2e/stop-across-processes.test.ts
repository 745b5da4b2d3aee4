import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BotProcess, startBotProcess } from '../support/bot-process.js';
import { type FakeOpenAI, reply, startFakeOpenAI } from '../support/fake-openai.js';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';
import { seenMessages } from '../support/slack-messages.js';
import { appMentionEvent, eventEnvelope, nextTs, postEvent } from '../support/slack-requests.js';
import { type FreshDatabase, freshDatabase } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { SECRET } from './harness.js';

/**
 * Two real bot processes (each with its worker thread, as `npm start` runs) on one database: the stop button's
 * event reaches the process that does not drive the run, and the one that does stops it.
 */
describe('a stop delivered to another process', () => {
  let slack: FakeSlack;
  let model: FakeOpenAI;
  let database: FreshDatabase;
  let bots: BotProcess[] = [];
  beforeEach(async () => {
    slack = await startFakeSlack();
    model = await startFakeOpenAI();
    database = await freshDatabase('postgres');
  });
  afterEach(async () => {
    await Promise.all(bots.map((bot) => bot.kill()));
    bots = [];
    await slack.close();
    await model.close();
    await database.drop();
  });

  it('is recorded in the database and honoured by the process driving the run', async () => {
    const env = {
      SLACK_BOT_TOKEN: 'xoxb-test-token',
      SLACK_SIGNING_SECRET: SECRET,
      SLACK_API_URL: slack.url,
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: model.baseURL,
      LOG_LEVEL: 'warn',
      ...database.env,
    };
    bots = await Promise.all([startBotProcess({ env }), startBotProcess({ env })]);
    const [driver, other] = bots;
    if (!driver || !other) throw new Error('no bots');
    model.enqueue(reply.hang());
    const ts = nextTs();
    const mention = eventEnvelope(
      appMentionEvent({ user: 'U1', channel: 'C1', text: '<@UBOT> think hard', ts }),
    );
    expect((await postEvent(`${driver.url}/slack/events`, SECRET, mention)).status).toBe(200);
    await model.waitForRequests(1, 10_000);

    const stop = eventEnvelope({
      type: 'agent_session_stopped',
      channel: 'C1',
      thread_ts: ts,
      user: 'U0STOPPER',
      streaming_message_ts: [],
      event_ts: nextTs(),
    });
    expect((await postEvent(`${other.url}/slack/events`, SECRET, stop)).status).toBe(200);
    const said = await waitUntil(
      () => seenMessages(slack.calls).find((m) => m.finished && m.text.startsWith('Stopped by <@U0STOPPER>')),
      { timeoutMs: 10_000, message: 'the driver did not stop the run' },
    );
    expect(said.threadTs).toBe(ts);
    const [cancelled] = await rows(
      database.config,
      "select actor from audit_events where kind = 'run.cancelled'",
    );
    expect(cancelled?.actor).toBe('U0STOPPER');
    await slack.waitForCall(
      'agents.sessions.setStatus',
      (c) => c.params.thread_ts === ts && c.params.status === 'active',
      10_000,
    );
    expect(model.requests).toHaveLength(1);
  });
});
