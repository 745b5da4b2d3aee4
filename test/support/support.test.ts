import type { IncomingHttpHeaders } from 'node:http';
import { join } from 'node:path';
import { App, LogLevel, verifySlackRequest } from '@slack/bolt';
import { WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebClient } from '@slack/web-api';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { listensOn, REPO_ROOT, runBotProcessToExit, startBotProcess } from './bot-process.js';
import { type FakeOpenAI, reply, startFakeOpenAI } from './fake-openai.js';
import { type FakeSlack, slackReply, startFakeSlack } from './fake-slack.js';
import { listenLocal, readBody } from './local-server.js';
import {
  appMentionEvent,
  blockActionsPayload,
  eventEnvelope,
  messageEvent,
  nextTs,
  postEvent,
  postInteraction,
  postSlashCommand,
  signedPost,
  slashCommandBody,
  viewSubmissionPayload,
} from './slack-requests.js';
import { waitUntil } from './wait.js';

const SECRET = 'test-signing-secret';

describe('fake OpenAI with the real openai client', () => {
  let model: FakeOpenAI;
  let client: OpenAI;
  const ask = { model: 'gpt-test', messages: [{ role: 'user' as const, content: 'hi' }] };

  beforeAll(async () => {
    model = await startFakeOpenAI();
    client = new OpenAI({ apiKey: 'sk-test', baseURL: model.baseURL, maxRetries: 0, timeout: 5000 });
  });
  afterEach(() => model.reset());
  afterAll(() => model.close());

  it('answers a text reply and records the request', async () => {
    model.enqueue(reply.text('hello'));
    const { data, response } = await client.chat.completions.create(ask).withResponse();
    expect(data.object).toBe('chat.completion');
    expect(data.choices[0]?.message).toMatchObject({ role: 'assistant', content: 'hello', refusal: null });
    expect(data.choices[0]?.finish_reason).toBe('stop');
    expect(data.usage?.total_tokens).toBeGreaterThan(0);
    expect(response.headers.get('x-request-id')).toMatch(/^req_fake/);
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]?.messages[0]).toEqual({ role: 'user', content: 'hi' });
    expect(model.queued()).toBe(0);
  });

  it('answers tool calls with generated ids, object and malformed string arguments', async () => {
    model.enqueue(
      reply.toolCalls([
        { name: 'get_weather', arguments: { city: 'Paris' } },
        { name: 'broken', arguments: '{"city": ', id: 'call_fixed' },
      ]),
    );
    const tools = [
      { type: 'function' as const, function: { name: 'get_weather', parameters: { type: 'object' } } },
    ];
    const completion = await client.chat.completions.create({ ...ask, tools });
    const choice = completion.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    const [first, second] = choice?.message.tool_calls ?? [];
    expect(first?.id).toMatch(/^call_[0-9a-f]{24}$/);
    expect(first?.type === 'function' && JSON.parse(first.function.arguments)).toEqual({ city: 'Paris' });
    expect(second).toEqual({
      id: 'call_fixed',
      type: 'function',
      function: { name: 'broken', arguments: '{"city": ' },
    });
    expect(model.requests[0]?.tools?.[0]?.function?.name).toBe('get_weather');
  });

  it('streams text and tool calls as chat.completion.chunk events', async () => {
    model.enqueue(
      reply.text('Hello streaming world'),
      reply.toolCalls(
        [{ name: 'search', arguments: { query: 'slack approvals', limit: 3 } }],
        'Let me look.',
      ),
    );
    const textStream = await client.chat.completions.create({ ...ask, stream: true });
    let text = '';
    let deltas = 0;
    let finish: string | null = null;
    for await (const chunk of textStream) {
      expect(chunk.object).toBe('chat.completion.chunk');
      const choice = chunk.choices[0];
      if (choice?.delta.content) deltas += 1;
      text += choice?.delta.content ?? '';
      finish = choice?.finish_reason ?? finish;
    }
    expect(text).toBe('Hello streaming world');
    expect(deltas).toBeGreaterThan(1);
    expect(finish).toBe('stop');

    const toolStream = await client.chat.completions.create({
      ...ask,
      stream: true,
      stream_options: { include_usage: true },
    });
    const calls = new Map<number, { id: string; name: string; args: string }>();
    let content = '';
    let usage = 0;
    for await (const chunk of toolStream) {
      if (chunk.usage) usage = chunk.usage.total_tokens;
      const delta = chunk.choices[0]?.delta;
      content += delta?.content ?? '';
      for (const part of delta?.tool_calls ?? []) {
        const call = calls.get(part.index) ?? { id: '', name: '', args: '' };
        call.id ||= part.id ?? '';
        call.name ||= part.function?.name ?? '';
        call.args += part.function?.arguments ?? '';
        calls.set(part.index, call);
        finish = chunk.choices[0]?.finish_reason ?? finish;
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(content).toBe('Let me look.');
    expect(finish).toBe('tool_calls');
    expect(usage).toBeGreaterThan(0);
    const call = calls.get(0);
    expect(call?.id).toMatch(/^call_/);
    expect(call?.name).toBe('search');
    expect(JSON.parse(call?.args ?? '')).toEqual({ query: 'slack approvals', limit: 3 });
  });

  it('maps scripted HTTP errors to the OpenAI error classes', async () => {
    model.enqueue(reply.error(429, undefined, { 'retry-after': '1' }), reply.error(400));
    const limited = await client.chat.completions.create(ask).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(OpenAI.RateLimitError);
    expect(limited instanceof OpenAI.APIError && limited.headers.get('retry-after')).toBe('1');
    await expect(client.chat.completions.create(ask)).rejects.toBeInstanceOf(OpenAI.BadRequestError);
  });

  it('fails loudly with HTTP 500 when no reply is scripted', async () => {
    const error = await client.chat.completions.create(ask).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.InternalServerError);
    expect(String(error)).toContain('fake model: no scripted reply');
  });

  it('uses the handler when the queue is empty, and supports empty choices, raw bodies and hangs', async () => {
    model.setHandler((request) => reply.text(`echo ${request.messages.length}`));
    const echoed = await client.chat.completions.create(ask);
    expect(echoed.choices[0]?.message.content).toBe('echo 1');

    model.enqueue(reply.emptyChoices());
    expect((await client.chat.completions.create(ask)).choices).toEqual([]);

    model.enqueue(reply.raw(502, '<html>bad gateway</html>', { 'content-type': 'text/html' }));
    await expect(client.chat.completions.create(ask)).rejects.toBeInstanceOf(OpenAI.InternalServerError);

    model.enqueue(reply.hang());
    const impatient = new OpenAI({ apiKey: 'sk-test', baseURL: model.baseURL, maxRetries: 0, timeout: 200 });
    await expect(impatient.chat.completions.create(ask)).rejects.toBeInstanceOf(
      OpenAI.APIConnectionTimeoutError,
    );
  });

  it('waitForRequests resolves once enough requests arrived and times out otherwise', async () => {
    model.setHandler(() => reply.delayed(20, reply.text('late')));
    const pending = model.waitForRequests(2, 2000);
    await Promise.all([client.chat.completions.create(ask), client.chat.completions.create(ask)]);
    expect(await pending).toHaveLength(2);
    await expect(model.waitForRequests(3, 50)).rejects.toThrow(/expected 3 request/);
  });
});

describe('fake Slack with the real WebClient', () => {
  let slack: FakeSlack;
  let client: WebClient;

  beforeAll(async () => {
    slack = await startFakeSlack();
    client = new WebClient('xoxb-test', { slackApiUrl: slack.url, retryConfig: { retries: 0 } });
  });
  afterEach(() => {
    slack.reset();
    for (const method of ['chat.postMessage', 'chat.update']) slack.clearResponse(method);
  });
  afterAll(() => slack.close());

  it('records a form-encoded chat.postMessage with parsed blocks and answers like Slack', async () => {
    const blocks = [{ type: 'section', text: { type: 'mrkdwn', text: '*Approve?*' } }];
    const first = await client.chat.postMessage({
      channel: 'C1',
      text: 'Approval needed',
      blocks,
      thread_ts: '1.2',
    });
    const second = await client.chat.postMessage({ channel: 'C1', text: 'again' });
    expect(first).toMatchObject({
      ok: true,
      channel: 'C1',
      message: { text: 'Approval needed', thread_ts: '1.2' },
    });
    expect(first.ts).toMatch(/^\d{10}\.\d{6}$/);
    expect(Number(second.ts)).toBeGreaterThan(Number(first.ts));
    const call = await slack.waitForCall('chat.postMessage');
    expect(call.params.blocks).toEqual(blocks);
    expect(call.params).toMatchObject({ channel: 'C1', text: 'Approval needed', thread_ts: '1.2' });
    expect(call.token).toBe('xoxb-test');
    expect(slack.callsTo('chat.postMessage')).toHaveLength(2);
  });

  it('waitForCall waits for a future matching call and times out with the calls it saw', async () => {
    const waiting = slack.waitForCall('chat.update', (c) => c.params.ts === '9.9', 2000);
    await client.chat.update({ channel: 'C1', ts: '1.1', text: 'not this one' });
    await client.chat.update({ channel: 'C1', ts: '9.9', text: 'this one', blocks: [] });
    expect((await waiting).params).toMatchObject({ ts: '9.9', blocks: [] });
    await expect(slack.waitForCall('views.open', undefined, 50)).rejects.toThrow(/chat.update, chat.update/);
  });

  it('surfaces { ok: false }, HTTP 429 and HTTP 500 as the web-api error classes', async () => {
    slack.setResponse('chat.postMessage', () => slackReply.error('channel_not_found'));
    const platform = await client.chat.postMessage({ channel: 'CX', text: 'x' }).catch((e: unknown) => e);
    expect(platform).toBeInstanceOf(WebAPIPlatformError);
    expect(platform instanceof WebAPIPlatformError && platform.data.error).toBe('channel_not_found');

    slack.setResponse('chat.update', () => slackReply.rateLimited(7));
    const strict = new WebClient('xoxb-test', { slackApiUrl: slack.url, rejectRateLimitedCalls: true });
    const limited = await strict.chat
      .update({ channel: 'C1', ts: '1.1', text: 'x' })
      .catch((e: unknown) => e);
    expect(limited instanceof WebAPIRateLimitedError && limited.retryAfter).toBe(7);

    slack.setResponse('chat.update', () => slackReply.http(500));
    await expect(client.chat.update({ channel: 'C1', ts: '1.1', text: 'x' })).rejects.toBeInstanceOf(
      WebAPIHTTPError,
    );
    await expect(client.apiCall('no.such.method')).rejects.toThrow(/unknown_method/);
  });

  it('answers the default replies the bot relies on', async () => {
    expect(await client.auth.test()).toMatchObject({
      ok: true,
      user_id: 'UBOT',
      bot_id: 'BBOT',
      team_id: 'T1',
    });
    const opened = await client.views.open({
      trigger_id: '1.2.3',
      view: { type: 'modal', callback_id: 'reason', title: { type: 'plain_text', text: 'Why' }, blocks: [] },
    });
    expect(opened.view).toMatchObject({ id: expect.stringMatching(/^V/), callback_id: 'reason' });
    expect((await client.users.info({ user: 'U7' })).user).toMatchObject({ id: 'U7', is_admin: false });
    expect((await client.conversations.open({ users: 'U7' })).channel?.id).toMatch(/^D/);
    expect(slack.callsTo('views.open')[0]?.params.view).toMatchObject({ callback_id: 'reason' });
  });
});

describe('signed Slack requests', () => {
  it('produce signatures that Bolt verifySlackRequest accepts', async () => {
    let received: { body: string; headers: IncomingHttpHeaders } | undefined;
    const receiver = await listenLocal(async (req, res) => {
      received = { body: await readBody(req), headers: req.headers };
      res.end();
    });
    const mention = appMentionEvent({ user: 'U1', text: '<@UBOT> hi', channel: 'C1' });
    try {
      await postEvent(`http://127.0.0.1:${receiver.port}/slack/events`, SECRET, eventEnvelope(mention));
    } finally {
      await receiver.close();
    }
    const body = received?.body ?? '';
    const headers = {
      'x-slack-signature': String(received?.headers['x-slack-signature']),
      'x-slack-request-timestamp': Number(received?.headers['x-slack-request-timestamp']),
    };
    expect(received?.headers['content-type']).toBe('application/json');
    expect(JSON.parse(body)).toMatchObject({
      type: 'event_callback',
      team_id: 'T1',
      event: { type: 'app_mention' },
    });
    expect(() => verifySlackRequest({ signingSecret: SECRET, body, headers })).not.toThrow();
    expect(() => verifySlackRequest({ signingSecret: 'wrong', body, headers })).toThrow();
  });

  it('drive a real Bolt app: event, message, button, modal submit and slash command', async () => {
    const slack = await startFakeSlack();
    const seen: string[] = [];
    const app = new App({
      signingSecret: SECRET,
      token: 'xoxb-test',
      botId: 'BBOT',
      botUserId: 'UBOT',
      processBeforeResponse: true,
      logLevel: LogLevel.ERROR,
      clientOptions: { slackApiUrl: slack.url, retryConfig: { retries: 0 } },
    });
    app.event('app_mention', async ({ event, client }) => {
      seen.push(`mention:${event.text}`);
      await client.chat.postMessage({ channel: event.channel, thread_ts: event.ts, text: 'on it' });
    });
    app.message(async ({ message }) => {
      seen.push(`message:${'channel_type' in message ? message.channel_type : '?'}`);
    });
    app.action('approval:approve', async ({ ack, body, action }) => {
      await ack();
      seen.push(`action:${body.user.id}:${action.type === 'button' ? action.value : '?'}`);
    });
    app.view('reason', async ({ ack, view }) => {
      await ack();
      seen.push(`view:${view.private_metadata}:${JSON.stringify(view.state.values)}`);
    });
    app.command('/agent-audit', async ({ ack, command, respond }) => {
      await ack();
      seen.push(`command:${command.text}`);
      await respond({ response_type: 'ephemeral', text: 'audit' });
    });
    const server = await app.start({ port: 0, host: '127.0.0.1' });
    const address = server.address();
    const port = typeof address === 'object' && address !== null ? address.port : 0;
    const url = `http://127.0.0.1:${port}/slack/events`;
    try {
      const mention = appMentionEvent({ user: 'U1', text: '<@UBOT> hi', channel: 'C1' });
      expect((await postEvent(url, SECRET, eventEnvelope(mention))).status).toBe(200);
      const posted = await slack.waitForCall('chat.postMessage');
      expect(posted.params).toMatchObject({ channel: 'C1', thread_ts: mention.ts, text: 'on it' });

      const dm = messageEvent({ user: 'U1', text: 'hello', channel: 'D1', channelType: 'im', ts: nextTs() });
      expect((await postEvent(url, SECRET, eventEnvelope(dm))).status).toBe(200);

      const click = blockActionsPayload({
        userId: 'U2',
        channelId: 'C1',
        messageTs: '1700000100.000001',
        actionId: 'approval:approve',
        value: 'apr_1',
      });
      expect((await postInteraction(url, SECRET, click)).status).toBe(200);

      const values = { why: { input: { type: 'plain_text_input', value: 'too risky' } } };
      const submit = viewSubmissionPayload({
        userId: 'U2',
        callbackId: 'reason',
        privateMetadata: 'apr_1',
        values,
      });
      expect((await postInteraction(url, SECRET, submit)).status).toBe(200);

      const responseUrl = slack.responseUrl('cmd1');
      const fields = slashCommandBody({
        command: '/agent-audit',
        text: 'last 10',
        userId: 'U3',
        channelId: 'C1',
      });
      expect((await postSlashCommand(url, SECRET, { ...fields, response_url: responseUrl })).status).toBe(
        200,
      );
      const responded = await slack.waitForCall('response_url');
      expect(responded.params).toMatchObject({
        response_type: 'ephemeral',
        text: 'audit',
        responseUrlId: 'cmd1',
      });

      const forged = await signedPost(url, 'wrong-secret', { body: '{}', contentType: 'application/json' });
      expect(forged.status).toBe(401);
      expect(seen).toEqual([
        'mention:<@UBOT> hi',
        'message:im',
        'action:U2:apr_1',
        `view:apr_1:${JSON.stringify(values)}`,
        'command:last 10',
      ]);
    } finally {
      await app.stop();
      await slack.close();
    }
  });
});

describe('bot process helpers', () => {
  const entry = join(REPO_ROOT, 'test', 'support', 'fixtures', 'health-server.ts');

  it('starts a TypeScript entry point with a minimal env, waits for /healthz, and kills it', async () => {
    const bot = await startBotProcess({ env: { GREETING: 'hi' }, entry });
    expect(bot.url).toBe(`http://127.0.0.1:${bot.port}`);
    expect((await fetch(`${bot.url}/healthz`)).status).toBe(200);
    await waitUntil(() => bot.output().includes('.env='));
    expect(bot.output()).toContain('GREETING=hi');
    expect(bot.output()).toContain('NODE_OPTIONS=<unset>');
    // Not the repo root, where a developer's .env lives: the child reads no .env at all.
    const cwd = /fixture: cwd=(\S+) \.env=(\w+)/.exec(bot.output());
    expect(cwd?.[1]).not.toBe(REPO_ROOT);
    expect(cwd?.[2]).toBe('absent');
    expect(await bot.kill('SIGTERM')).toBe(0);
    expect(await bot.exited).toEqual({ code: 0, signal: null });
  });

  it('reports a start-up failure with the exit code and output', async () => {
    const result = await runBotProcessToExit({ env: { FIXTURE_EXIT_CODE: '3' }, entry, timeoutMs: 15_000 });
    expect(result.code).toBe(3);
    expect(result.stderr).toContain('refusing to start');
    await expect(startBotProcess({ env: { FIXTURE_EXIT_CODE: '4' }, entry })).rejects.toThrow(
      /exited \(code 4[\s\S]*refusing to start/,
    );
  });

  it('is not fooled by another server answering /healthz on the port the child was given', async () => {
    const other = await listenLocal(async (_req, res) => {
      res.writeHead(200);
      res.end('ok');
    });
    try {
      expect(listensOn(process.pid, other.port)).toBe(true);
      const port = String(other.port);
      await expect(startBotProcess({ env: { PORT: port }, entry })).rejects.toThrow(
        /exited[\s\S]*EADDRINUSE/,
      );
    } finally {
      await other.close();
    }
  });
});

describe('waitUntil', () => {
  it('resolves with the first truthy value and throws the message on timeout', async () => {
    let n = 0;
    expect(await waitUntil(() => (++n >= 3 ? `done ${n}` : ''), { intervalMs: 1 })).toBe('done 3');
    await expect(waitUntil(() => false, { timeoutMs: 30, message: 'never' })).rejects.toThrow('never');
  });
});
