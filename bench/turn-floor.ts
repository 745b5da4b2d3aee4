import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { z } from 'zod';

/**
 * The floor of the turn-overhead benchmark, run as its own process: the least a bot must do for a turn.
 * `POST /slack/events`: reads the body, checks Slack's signature, parses the JSON and answers 200; then sends
 * the bot's Chat Completions request (the body the bench captured from the bot, with this event's text) with
 * plain `fetch`, and posts the answer with `chat.postMessage` as the bot does. Any other request: 200.
 */

function setting(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') throw new Error(`turn floor: ${name} is not set`);
  return value;
}

const secret = setting('SLACK_SIGNING_SECRET');
const botToken = setting('SLACK_BOT_TOKEN');
const slackApiUrl = setting('SLACK_API_URL');
const modelUrl = `${setting('OPENAI_BASE_URL').replace(/\/$/, '')}/chat/completions`;
const apiKey = setting('OPENAI_API_KEY');
const requestFile = setting('TURN_FLOOR_REQUEST');
const Template = z.looseObject({ messages: z.array(z.unknown()).min(1) });
let template: z.infer<typeof Template> | undefined;

/**
 * A Chat Completions body the bot sent, read on the first event (the bench writes it after the floor has
 * started); the floor swaps in each event's text as the last (user) message.
 */
function requestTemplate(): z.infer<typeof Template> {
  template ??= Template.parse(JSON.parse(readFileSync(requestFile, 'utf8')));
  return template;
}

const FIVE_MINUTES_S = 5 * 60;

/** Slack's signature check: HMAC-SHA256 of `v0:<timestamp>:<raw body>`, compared in constant time. */
function signed(req: IncomingMessage, raw: Buffer): boolean {
  const timestamp = Number(req.headers['x-slack-request-timestamp']);
  const signature = req.headers['x-slack-signature'];
  if (!Number.isInteger(timestamp) || typeof signature !== 'string') return false;
  if (Math.abs(Math.floor(Date.now() / 1000) - timestamp) > FIVE_MINUTES_S) return false;
  const expected = Buffer.from(
    `v0=${createHmac('sha256', secret).update(`v0:${timestamp}:`).update(raw).digest('hex')}`,
  );
  const given = Buffer.from(signature);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function text(value: unknown, key: string): string | undefined {
  if (value === null || typeof value !== 'object') return undefined;
  const field: unknown = Reflect.get(value, key);
  return typeof field === 'string' ? field : undefined;
}

function readRaw(req: IncomingMessage): Promise<Buffer> {
  return new Promise((done, fail) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => done(Buffer.concat(chunks)));
    req.on('error', fail);
  });
}

/** Model request, then the answer posted in the mention's thread. */
async function turn(event: unknown): Promise<void> {
  const channel = text(event, 'channel');
  const ts = text(event, 'ts');
  const mention = text(event, 'text');
  if (channel === undefined || ts === undefined || mention === undefined) return;
  const { messages, ...rest } = requestTemplate();
  const body = {
    ...rest,
    messages: [
      ...messages.slice(0, -1),
      { role: 'user', content: mention.replace(/^\s*<@[A-Z0-9]+>\s*/, '') },
    ],
  };
  const response = await fetch(modelUrl, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const completion: unknown = await response.json();
  if (!response.ok) throw new Error(`model answered HTTP ${response.status}`);
  const choices =
    completion !== null && typeof completion === 'object' ? Reflect.get(completion, 'choices') : [];
  const answer = text(
    Array.isArray(choices) ? Reflect.get(choices[0] ?? {}, 'message') : undefined,
    'content',
  );
  if (answer === undefined) throw new Error('model answered without text');
  const form = new URLSearchParams({
    channel,
    thread_ts: text(event, 'thread_ts') ?? ts,
    text: answer,
    blocks: JSON.stringify([{ type: 'markdown', text: answer }]),
    // As the bot: the message names its run and the digest of its text (a run id of the bot's shape).
    metadata: JSON.stringify({
      event_type: 'run_answer',
      event_payload: {
        run_id: `run_${randomBytes(12).toString('hex')}`,
        part: createHash('sha256').update(answer).digest('hex').slice(0, 32),
      },
    }),
    // As the bot: the model's text never gets link previews.
    unfurl_links: 'false',
    unfurl_media: 'false',
  });
  const posted = await fetch(`${slackApiUrl}chat.postMessage`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${botToken}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: form.toString(),
  });
  const result: unknown = await posted.json();
  if (result === null || typeof result !== 'object' || Reflect.get(result, 'ok') !== true)
    throw new Error(`chat.postMessage failed: ${JSON.stringify(result)}`);
}

async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const raw = await readRaw(req);
  if (req.method !== 'POST' || req.url !== '/slack/events') {
    res.end();
    return;
  }
  if (!signed(req, raw)) {
    res.writeHead(401).end();
    return;
  }
  const envelope: unknown = JSON.parse(raw.toString('utf8'));
  res.end();
  if (text(envelope, 'type') !== 'event_callback') return;
  const event: unknown =
    envelope !== null && typeof envelope === 'object' ? Reflect.get(envelope, 'event') : undefined;
  if (text(event, 'type') === 'app_mention') await turn(event);
}

createServer((req, res) => {
  handle(req, res).catch((error: unknown) => {
    if (!res.headersSent) res.writeHead(500);
    if (!res.writableEnded) res.end();
    process.stderr.write(`turn floor: ${error instanceof Error ? error.stack : String(error)}\n`);
  });
}).listen(Number(process.env.PORT), '127.0.0.1');
