import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadApprovalPolicy } from '../../src/approvals/policy-file.js';
import { type Bot, createBot } from '../../src/compose/bot.js';
import { loadConfig } from '../../src/config.js';
import { createLogger, silentLogger } from '../../src/logger.js';
import { createOpenAIModel } from '../../src/model/openai/openai-client.js';
import { SYSTEM_PROMPT } from '../../src/slack/system-prompt.js';
import { toolNames } from '../../src/tools/built-in-tools.js';
import { freePort } from '../support/bot-process.js';
import { type FakeOpenAI, reply, startFakeOpenAI } from '../support/fake-openai.js';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';
import { type FakeSocketMode, startFakeSocketMode } from '../support/fake-socket-mode.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import { appMentionEvent, eventEnvelope, nextTs } from '../support/slack-requests.js';
import { sleep, waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { approvalIdOf, cardTs, isApprovalCard } from './harness.js';

describe('Socket Mode', () => {
  let slack: FakeSlack;
  let model: FakeOpenAI;
  let socket: FakeSocketMode;
  let bot: Bot;
  let dir: string;

  beforeEach(async () => {
    slack = await startFakeSlack();
    model = await startFakeOpenAI();
    socket = await startFakeSocketMode(slack);
    dir = mkdtempSync(join(tmpdir(), 'bot-socket-'));
  });
  /** Socket Mode settings (an app-level token, no signing secret) against the fakes. */
  const socketConfig = (port: number, env: Record<string, string> = {}) => {
    const loaded = loadConfig({
      SLACK_BOT_TOKEN: 'xoxb-socket',
      SLACK_APP_TOKEN: 'xapp-socket',
      SLACK_API_URL: slack.url,
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_STREAM: 'false',
      DATABASE_PATH: join(dir, 'bot.db'),
      // In this test's process (whose TypeScript a worker thread could not load): one thread.
      WORKERS: '0',
      PORT: String(port),
      LOG_LEVEL: 'error',
      ...env,
    });
    if (!loaded.ok) throw new Error(loaded.problems.join());
    const policy = loadApprovalPolicy(loaded.config.approvalPolicyFile, toolNames());
    if (!policy.ok) throw new Error(policy.problems.join());
    return { config: loaded.config, policy: policy.policy };
  };

  afterEach(async () => {
    await bot.stop(1000);
    await socket.close();
    await slack.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('with an app token the bot connects over Socket Mode, acks envelopes, and serves /healthz on PORT', async () => {
    const port = await freePort();
    const loaded = socketConfig(port);
    bot = await createBot(loaded.config, silentLogger, loaded.policy, {
      model: createOpenAIModel({ ...loaded.config.openai, systemPrompt: SYSTEM_PROMPT, maxRetries: 0 }),
      retryConfig: { retries: 0 },
    });
    await bot.start();
    await socket.connected();
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    expect(health.status).toBe(200);
    // Only the status: the details are opt-in (HEALTHZ_DETAILS).
    expect(await health.json()).toEqual({ status: 'ok' });
    // The web console is served on the same port in Socket Mode too.
    const signIn = await fetch(`http://127.0.0.1:${port}/console/login`);
    expect(signIn.status).toBe(200);
    expect(signIn.headers.get('content-security-policy')).toContain("default-src 'none'");
    expect((await fetch(`http://127.0.0.1:${port}/console/api/me`)).status).toBe(401);

    model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'via socket' } }]),
      reply.text('Saved over the socket.'),
    );
    const ts = nextTs();
    const eventEnvelopeId = socket.send(
      'events_api',
      eventEnvelope(appMentionEvent({ user: 'U1', channel: 'C1', text: '<@UBOT> note', ts })),
    );
    await socket.waitForAck(eventEnvelopeId);
    const card = await slack.waitForCall('chat.postMessage', isApprovalCard, 10_000);

    const click = blockActionsPayload({
      userId: 'U2',
      channelId: 'C1',
      messageTs: cardTs(card),
      threadTs: ts,
      actionId: 'approval:approve',
      value: approvalIdOf(card),
    });
    const clickEnvelopeId = socket.send('interactive', click);
    await socket.waitForAck(clickEnvelopeId);
    const answer = await slack.waitForCall(
      'chat.postMessage',
      (call) => call.params.text === 'Saved over the socket.',
      10_000,
    );
    expect(answer.params.thread_ts).toBe(ts);
  });

  it('a click is recorded before its ack, and an event sent again with the same event_id is handled once', async () => {
    const loaded = socketConfig(await freePort());
    const logs: string[] = [];
    bot = await createBot(
      loaded.config,
      createLogger('warn', (line) => logs.push(line)),
      loaded.policy,
      {
        model: createOpenAIModel({ ...loaded.config.openai, systemPrompt: SYSTEM_PROMPT, maxRetries: 0 }),
        retryConfig: { retries: 0 },
      },
    );
    await bot.start();
    await socket.connected();
    const ts = nextTs();
    const pause = async (count: number, threadTs?: string) => {
      model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: `note ${count}` } }]));
      const event = appMentionEvent({
        user: 'U1',
        channel: 'C1',
        text: '<@UBOT> note',
        ts: count === 1 ? ts : nextTs(),
        ...(threadTs ? { threadTs } : {}),
      });
      await socket.waitForAck(socket.send('events_api', eventEnvelope(event)));
      return waitUntil(() => slack.callsTo('chat.postMessage').filter(isApprovalCard)[count - 1], {
        timeoutMs: 10_000,
      });
    };
    const stop = eventEnvelope(
      { type: 'agent_session_stopped', channel: 'C1', thread_ts: ts, user: 'U1', event_ts: nextTs() },
      { eventId: 'Ev0SOCKETSTOP' },
    );
    await pause(1);
    await socket.waitForAck(socket.send('events_api', stop));
    await waitUntil(
      async () =>
        (await rows(loaded.config.database, "select id from runs where status = 'cancelled'")).length === 1 ||
        undefined,
      { timeoutMs: 10_000 },
    );

    const card = await pause(2, ts);
    await socket.waitForAck(socket.send('events_api', stop));
    await waitUntil(() => logs.some((line) => line.includes('repeated event ignored')) || undefined, {
      timeoutMs: 10_000,
    });
    model.enqueue(reply.text('Saved once.'));
    const click = blockActionsPayload({
      userId: 'U2',
      channelId: 'C1',
      messageTs: cardTs(card),
      threadTs: ts,
      actionId: 'approval:approve',
      value: approvalIdOf(card),
    });
    await socket.waitForAck(socket.send('interactive', click));
    const recorded = await rows(
      loaded.config.database,
      'select click from accepted_requests where click is not null',
    );
    expect(recorded.map((row) => JSON.parse(String(row.click)))).toEqual([
      expect.objectContaining({ userId: 'U2', value: approvalIdOf(card) }),
    ]);
    await slack.waitForCall('chat.postMessage', (call) => call.params.text === 'Saved once.', 10_000);
    const runs = await rows(loaded.config.database, 'select status from runs order by created_at');
    expect(runs.map((row) => row.status)).toEqual(['cancelled', 'completed']);
  });

  it('a PORT already in use stops start-up, as it does in HTTP mode', async () => {
    const port = await freePort();
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(port, resolve));
    const loaded = socketConfig(port);
    bot = await createBot(loaded.config, silentLogger, loaded.policy, { retryConfig: { retries: 0 } });
    await expect(bot.start()).rejects.toThrow(`PORT ${port}`);
    // Bolt checks the token as soon as the app is built; let that answer arrive before the fakes close.
    const check = await slack.waitForCall('auth.test');
    await waitUntil(() => check.reply !== undefined);
    await sleep(100);
    await new Promise<void>((resolve) => holder.close(() => resolve()));
  });

  it('/healthz says when the Socket Mode connection is lost (503, reconnecting since when) and when it is back', async () => {
    const port = await freePort();
    // The connection is one of the details /healthz gives when asked to.
    const loaded = socketConfig(port, { HEALTHZ_DETAILS: 'true' });
    // A short back-off, so the reconnection comes within a second instead of five.
    bot = await createBot(loaded.config, silentLogger, loaded.policy, {
      retryConfig: { retries: 0 },
      socketPingTimeoutMs: 500,
    });
    await bot.start();
    await socket.connected();
    const healthz = async () => {
      const response = await fetch(`http://127.0.0.1:${port}/healthz`);
      return {
        status: response.status,
        body: z
          .object({ status: z.string(), slack: z.object({ connection: z.string(), since: z.string() }) })
          .parse(await response.json()),
      };
    };
    const before = Date.now();
    socket.drop();
    const lost = await waitUntil(async () => {
      const health = await healthz();
      return health.status === 503 ? health : undefined;
    });
    expect(lost.body.status).toBe('unavailable');
    expect(lost.body.slack.connection).toBe('reconnecting');
    expect(Date.parse(lost.body.slack.since)).toBeGreaterThanOrEqual(before - 1000);
    // The client connects again by itself, after its back-off.
    const back = await waitUntil(
      async () => {
        const health = await healthz();
        return health.status === 200 ? health : undefined;
      },
      { timeoutMs: 15_000, message: 'the bot never reconnected' },
    );
    expect(back.body.slack.connection).toBe('connected');
    expect(socket.connections()).toBe(2);
  });
});
