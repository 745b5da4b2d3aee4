import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadApprovalPolicy } from '../../src/approvals/policy-file.js';
import { type Bot, type BotOverrides, createBot } from '../../src/compose/bot.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import { createOpenAIModel } from '../../src/model/openai/openai-client.js';
import { SYSTEM_PROMPT } from '../../src/slack/system-prompt.js';
import { toolNames } from '../../src/tools/built-in-tools.js';
import { freePort } from '../support/bot-process.js';
import { type FakeOpenAI, reply, startFakeOpenAI } from '../support/fake-openai.js';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';
import { type FakeSocketMode, startFakeSocketMode } from '../support/fake-socket-mode.js';
import { installWorkspace, OAUTH_CLIENT, oauthEnv } from '../support/oauth-installs.js';
import { seenMessages } from '../support/slack-messages.js';
import { appMentionEvent, eventEnvelope, nextTs } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { installationsRefusedOnce } from './oauth-support.js';

describe('Socket Mode installed into several workspaces', () => {
  let slack: FakeSlack;
  let model: FakeOpenAI;
  let socket: FakeSocketMode;
  let bot: Bot | undefined;
  let dir: string;

  beforeEach(async () => {
    slack = await startFakeSlack();
    model = await startFakeOpenAI();
    socket = await startFakeSocketMode(slack);
    dir = mkdtempSync(join(tmpdir(), 'bot-socket-oauth-'));
  });
  afterEach(async () => {
    await bot?.stop(1000);
    await socket.close();
    await slack.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** The bot in Socket Mode with installs, its install pages on a free PORT; resolves with that port. */
  const startBot = async (overrides: BotOverrides = {}): Promise<number> => {
    const port = await freePort();
    const loaded = loadConfig({
      ...oauthEnv(),
      SLACK_APP_TOKEN: 'xapp-socket',
      SLACK_API_URL: slack.url,
      OPENAI_API_KEY: 'sk-test',
      OPENAI_BASE_URL: model.baseURL,
      OPENAI_STREAM: 'false',
      DATABASE_PATH: join(dir, 'bot.db'),
      WORKERS: '0',
      PORT: String(port),
      LOG_LEVEL: 'error',
    });
    if (!loaded.ok) throw new Error(loaded.problems.join());
    const policy = loadApprovalPolicy(loaded.config.approvalPolicyFile, toolNames());
    if (!policy.ok) throw new Error(policy.problems.join());
    bot = await createBot(loaded.config, silentLogger, policy.policy, {
      model: createOpenAIModel({ ...loaded.config.openai, systemPrompt: SYSTEM_PROMPT, maxRetries: 0 }),
      retryConfig: { retries: 0 },
      ...overrides,
    });
    await bot.start();
    return port;
  };

  it("one app-level token, installs served on PORT, each team's event answered with its own token", async () => {
    const port = await startBot();
    await socket.connected();
    // The connection was opened with the app-level token, the one token of the deployment's own.
    expect(slack.callsTo('apps.connections.open').map((call) => call.token)).toEqual(['xapp-socket']);

    const base = `http://127.0.0.1:${port}`;
    slack.oauth.enable({ ...OAUTH_CLIENT, redirectUrl: `${base}/slack/oauth_redirect` });
    await installWorkspace(slack, base, { teamId: 'T1' });
    await installWorkspace(slack, base, { teamId: 'T2' });

    const installed = slack.calls.length;
    for (const team of ['T1', 'T2']) {
      model.enqueue(reply.text(`Hello ${team}.`));
      const ts = nextTs();
      const event = appMentionEvent({ user: `U${team}`, channel: `C${team}`, text: '<@UBOT> hi', ts, team });
      await socket.waitForAck(socket.send('events_api', eventEnvelope(event, { teamId: team })));
      await waitUntil(() => seenMessages(slack.calls).find((m) => m.text === `Hello ${team}.`), {
        timeoutMs: 10_000,
        message: `expected the answer in ${team}`,
      });
    }
    // Every call about a team's channel (C<team>) went out with that team's token.
    const answering = slack.calls.slice(installed).filter((call) => call.token !== undefined);
    const channelOf = (params: Record<string, unknown>) => String(params.channel ?? params.channel_id);
    expect(
      answering.filter((call) => call.method === 'chat.postMessage').map((c) => channelOf(c.params)),
    ).toEqual(['CT1', 'CT2']);
    expect(answering.map((call) => [call.method, slack.oauth.teamOf(call.token)])).toEqual(
      answering.map((call) => [call.method, channelOf(call.params).slice(1)]),
    );
  });

  it('an event whose installation could not be read is left unacknowledged, and its redelivery is answered', async () => {
    const refusal = { next: false };
    const port = await startBot({ stores: installationsRefusedOnce(refusal) });
    await socket.connected();
    const base = `http://127.0.0.1:${port}`;
    slack.oauth.enable({ ...OAUTH_CLIENT, redirectUrl: `${base}/slack/oauth_redirect` });
    await installWorkspace(slack, base, { teamId: 'T1' });

    model.enqueue(reply.text('Hello T1.'));
    const event = appMentionEvent({
      user: 'UT1',
      channel: 'CT1',
      text: '<@UBOT> hi',
      ts: nextTs(),
      team: 'T1',
    });
    const envelope = eventEnvelope(event, { teamId: 'T1' });
    refusal.next = true;
    const first = socket.send('events_api', envelope);
    await waitUntil(() => !refusal.next || undefined, { message: 'the installation was not read' });
    // Slack sends an unacknowledged event again, with the same event id.
    await socket.waitForAck(socket.send('events_api', envelope));
    await waitUntil(() => seenMessages(slack.calls).find((m) => m.text === 'Hello T1.'), {
      timeoutMs: 10_000,
      message: 'expected the answer',
    });
    expect(socket.acks.map((ack) => ack.envelopeId)).not.toContain(first);
  });
});
