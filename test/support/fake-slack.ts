import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createFakeSlackOAuth, type FakeSlackOAuth, OAUTH_AUTHORIZE_PATH } from './fake-slack-oauth.js';
import { AUTHORIZE_PATH, createFakeSlackOpenId, type FakeSlackOpenId } from './fake-slack-openid.js';
import { defaultSlackReply, type SlackIds } from './fake-slack-replies.js';
import { isRecord } from './json-value.js';
import { listenLocal, readBody, sendJson } from './local-server.js';

/** One Web API call as the fake received it. */
export interface SlackCall {
  /** API method, e.g. `chat.postMessage`. */
  method: string;
  /** Body fields; the JSON-valued form fields (`blocks`, `view`, ...) are already parsed. */
  params: Record<string, unknown>;
  /** `Date.now()` when the call arrived. */
  at: number;
  /** Token from the `Authorization: Bearer` header, or from a `token` field. */
  token?: string;
  /** The body the fake answered (for example the `ts` of a posted message). */
  reply?: unknown;
}

/** The HTTP answer to one call. Slack itself answers 200 even for `{ ok: false }`, and 429 with `Retry-After`. */
export interface FakeReply {
  status?: number;
  headers?: Record<string, string>;
  body: unknown;
}

export type SlackHandler = (
  params: Record<string, unknown>,
  call: SlackCall,
) => FakeReply | Promise<FakeReply>;

export interface FakeSlack {
  /** Base URL for `clientOptions.slackApiUrl`, e.g. `http://127.0.0.1:PORT/api/`. */
  url: string;
  port: number;
  /** Every call so far, oldest first. `reset()` empties this same array. */
  calls: SlackCall[];
  callsTo(method: string): SlackCall[];
  /** Resolves with the first call to `method` matching `predicate`, including calls already recorded. */
  waitForCall(
    method: string,
    predicate?: (call: SlackCall) => boolean,
    timeoutMs?: number,
  ): Promise<SlackCall>;
  /** Scripts the answer for `method` until `clearResponse`. */
  setResponse(method: string, handler: SlackHandler): void;
  clearResponse(method: string): void;
  /** What the fake answers when nothing is scripted; handy inside a handler that only fails sometimes. */
  defaultReply(method: string, params: Record<string, unknown>): FakeReply;
  /**
   * A `response_url` served by this fake. POSTs to it are recorded as calls with method `response_url`
   * (params: the JSON body plus `responseUrlId`) and answered `{ ok: true }`.
   */
  responseUrl(id?: string): string;
  /** The members `conversations.members` lists for `channel` (in pages, in this order) from now on. */
  setMembers(channel: string, users: readonly string[]): void;
  /**
   * Sign in with Slack: who the authorize page (`GET /openid/connect/authorize`, recorded as a call of that
   * name) signs in, and codes made unusable. `openid.connect.token` and `.userInfo` answer accordingly.
   */
  openid: FakeSlackOpenId;
  /** Installs into several workspaces: tokens per workspace, refused once unknown or revoked. */
  oauth: FakeSlackOAuth;
  /** Forgets recorded calls (scripted responses stay). */
  reset(): void;
  close(): Promise<void>;
}

/** Builders for scripted replies. */
export const slackReply = {
  ok: (fields: Record<string, unknown> = {}): FakeReply => ({ body: { ok: true, ...fields } }),
  /** A platform error such as `channel_not_found`: HTTP 200 with `{ ok: false, error }`. */
  error: (error: string, fields: Record<string, unknown> = {}): FakeReply => ({
    body: { ok: false, error, ...fields },
  }),
  /** HTTP 429 with `Retry-After`, which makes `@slack/web-api` pause its queue and retry. */
  rateLimited: (retryAfterSeconds = 1): FakeReply => ({
    status: 429,
    headers: { 'retry-after': String(retryAfterSeconds) },
    body: { ok: false, error: 'ratelimited' },
  }),
  /** Any other HTTP status; the client surfaces it as `WebAPIHTTPError`. */
  http: (status: number, body: unknown = { ok: false, error: 'internal_error' }): FakeReply => ({
    status,
    body,
  }),
};

/** The pseudo-method under which POSTs to a `responseUrl()` are recorded. */
export const RESPONSE_URL_METHOD = 'response_url';

/** The pseudo-method under which visits to the authorize page of Sign in with Slack are recorded. */
export const AUTHORIZE_METHOD = 'openid.connect.authorize';

/** Form fields that `@slack/web-api` sends JSON-encoded (it stringifies every non-primitive argument). */
const JSON_FORM_FIELDS = new Set(['blocks', 'view', 'attachments', 'metadata', 'chunks', 'prompts']);

interface Waiter {
  method: string;
  predicate: (call: SlackCall) => boolean;
  resolve: (call: SlackCall) => void;
}

/**
 * Starts a fake Slack Web API on 127.0.0.1 that speaks the real wire protocol, so the real `WebClient`
 * (through Bolt's `clientOptions.slackApiUrl`) can talk to it. It records every call.
 *
 * @example
 * const slack = await startFakeSlack();
 * const app = new App({ ..., clientOptions: { slackApiUrl: slack.url, retryConfig: { retries: 0 } } });
 * const post = await slack.waitForCall('chat.postMessage', (c) => c.params.thread_ts === ts);
 */
export async function startFakeSlack(): Promise<FakeSlack> {
  const calls: SlackCall[] = [];
  const handlers = new Map<string, SlackHandler>();
  let waiters: Waiter[] = [];
  const ids: SlackIds = {
    ts: 0,
    view: 0,
    dm: new Map(),
    members: new Map(),
    threads: new Map(),
    channels: new Map(),
  };
  const openid = createFakeSlackOpenId();
  const oauth = createFakeSlackOAuth();

  const defaultReply = (method: string, params: Record<string, unknown>): FakeReply =>
    defaultSlackReply(method, params, ids);

  const record = (call: SlackCall): void => {
    calls.push(call);
    const matched = waiters.filter((w) => w.method === call.method && safeMatch(w.predicate, call));
    waiters = waiters.filter((w) => !matched.includes(w));
    for (const w of matched) w.resolve(call);
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.method === 'GET' && url.pathname === AUTHORIZE_PATH) {
      record({ method: AUTHORIZE_METHOD, params: parseQuery(url), at: Date.now() });
      openid.authorize(url.searchParams, res);
      return;
    }
    if (req.method === 'GET' && url.pathname === OAUTH_AUTHORIZE_PATH) {
      record({ method: 'oauth.v2.authorize', params: parseQuery(url), at: Date.now() });
      oauth.authorize(url.searchParams, res);
      return;
    }
    const api = /^\/api\/([A-Za-z0-9_.]+)$/.exec(url.pathname);
    const response = /^\/response\/([^/]+)$/.exec(url.pathname);
    const method = api?.[1] ?? (response ? RESPONSE_URL_METHOD : undefined);
    if (method === undefined) {
      sendJson(res, 404, { ok: false, error: 'not_found' });
      return;
    }
    const params = { ...parseParams(req.headers['content-type'], await readBody(req)), ...parseQuery(url) };
    if (response?.[1] !== undefined) params.responseUrlId = decodeURIComponent(response[1]);
    const call: SlackCall = { method, params, at: Date.now() };
    const token =
      bearerToken(req.headers.authorization) ?? (typeof params.token === 'string' ? params.token : undefined);
    if (token !== undefined) call.token = token;
    record(call);
    const handler = handlers.get(method);
    const reply =
      oauth.reply(method, params, call.token) ??
      (handler
        ? await handler(params, call)
        : (openid.reply(method, params, call.token) ?? defaultReply(method, params)));
    call.reply = reply.body;
    sendJson(res, reply.status ?? 200, reply.body, reply.headers);
  };

  const local = await listenLocal(handle);

  return {
    url: `http://127.0.0.1:${local.port}/api/`,
    port: local.port,
    calls,
    callsTo: (method) => calls.filter((c) => c.method === method),
    waitForCall: (method, predicate = () => true, timeoutMs = 5000) => {
      const seen = calls.find((c) => c.method === method && predicate(c));
      if (seen) return Promise.resolve(seen);
      return new Promise<SlackCall>((resolve, reject) => {
        const waiter: Waiter = {
          method,
          predicate,
          resolve: (call) => {
            clearTimeout(timer);
            resolve(call);
          },
        };
        const timer = setTimeout(() => {
          waiters = waiters.filter((w) => w !== waiter);
          const seenMethods = calls.map((c) => c.method).join(', ') || 'none';
          reject(
            new Error(
              `fake Slack: no matching ${method} call within ${timeoutMs} ms (calls: ${seenMethods})`,
            ),
          );
        }, timeoutMs);
        waiters.push(waiter);
      });
    },
    setResponse: (method, handler) => {
      handlers.set(method, handler);
    },
    clearResponse: (method) => {
      handlers.delete(method);
    },
    defaultReply,
    responseUrl: (id = randomUUID()) => `http://127.0.0.1:${local.port}/response/${encodeURIComponent(id)}`,
    setMembers: (channel, users) => {
      ids.members.set(channel, [...users]);
    },
    openid,
    oauth,
    reset: () => {
      calls.length = 0;
    },
    close: () => local.close(),
  };
}

/** A predicate that throws counts as "no match" rather than breaking the fake's request handling. */
function safeMatch(predicate: (call: SlackCall) => boolean, call: SlackCall): boolean {
  try {
    return predicate(call);
  } catch {
    return false;
  }
}

function parseParams(contentType: string | undefined, raw: string): Record<string, unknown> {
  if (raw === '') return {};
  if (contentType?.startsWith('application/json')) {
    const parsed: unknown = JSON.parse(raw);
    return isRecord(parsed) ? parsed : { body: parsed };
  }
  const params: Record<string, unknown> = {};
  for (const [key, value] of new URLSearchParams(raw)) {
    params[key] = JSON_FORM_FIELDS.has(key) ? parseJsonOr(value) : value;
  }
  return params;
}

function parseQuery(url: URL): Record<string, unknown> {
  const params: Record<string, unknown> = {};
  for (const [key, value] of url.searchParams)
    params[key] = JSON_FORM_FIELDS.has(key) ? parseJsonOr(value) : value;
  return params;
}

function parseJsonOr(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return value;
  }
}

function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)$/i.exec(header ?? '');
  return match?.[1];
}
