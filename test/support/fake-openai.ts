import type { IncomingMessage, ServerResponse } from 'node:http';
import { z } from 'zod';
import { type ModelReply, openAIErrorBody } from './fake-openai-replies.js';
import { type CompletionReply, completionBody, streamChunks } from './fake-openai-wire.js';
import { listenLocal, readBody, sendJson, sendText } from './local-server.js';
import { sleep, waitUntil } from './wait.js';

export { type FinishReason, type ModelReply, reply, type ToolCallSpec } from './fake-openai-replies.js';

const ToolCallSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  function: z.looseObject({ name: z.string(), arguments: z.string() }),
});

const MessageSchema = z.looseObject({
  role: z.string(),
  content: z.unknown().optional(),
  name: z.string().optional(),
  tool_calls: z.array(ToolCallSchema).optional(),
  tool_call_id: z.string().optional(),
});

const ToolSchema = z.looseObject({
  type: z.string(),
  function: z
    .looseObject({
      name: z.string(),
      description: z.string().optional(),
      parameters: z.record(z.string(), z.unknown()).optional(),
      strict: z.boolean().nullable().optional(),
    })
    .optional(),
});

/** The request bodies the fake accepts: what the OpenAI API requires, other fields kept as they came. */
export const ChatRequestSchema = z.looseObject({
  model: z.string(),
  messages: z.array(MessageSchema),
  tools: z.array(ToolSchema).optional(),
  tool_choice: z.unknown().optional(),
  stream: z.boolean().nullable().optional(),
  stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
});

/** A parsed `POST /v1/chat/completions` body. */
export type ChatRequest = z.infer<typeof ChatRequestSchema>;
export type ChatRequestMessage = ChatRequest['messages'][number];

export type ModelHandler = (request: ChatRequest, index: number) => ModelReply | Promise<ModelReply>;

export interface FakeOpenAI {
  /** For `new OpenAI({ baseURL })`: `http://127.0.0.1:PORT/v1`. */
  baseURL: string;
  port: number;
  /** Every valid request body, oldest first. */
  requests: ChatRequest[];
  /** Queues replies, answered in request order; the queue wins over the handler. */
  enqueue(...replies: ModelReply[]): void;
  /** Answers requests when the queue is empty; `undefined` removes it. */
  setHandler(handler: ModelHandler | undefined): void;
  /** How many queued replies no request has taken yet. */
  queued(): number;
  /** Resolves with `requests` once at least `n` have arrived. */
  waitForRequests(n: number, timeoutMs?: number): Promise<ChatRequest[]>;
  /**
   * Resets (TCP RST) the connection of every stream left open (`reply.streamThenHang`, `open: true`): a socket
   * reset in the middle of a streamed answer. Resolves with how many there were.
   */
  breakOpenStreams(): number;
  /**
   * Refuses, as OpenAI does (HTTP 400, code `context_length_exceeded`), every request over `tokens` (its
   * messages and tools counted with o200k_base, plus what each message costs in the chat template); `undefined`
   * lifts the limit. Each refused request is recorded in `refused`, not in `requests`.
   */
  setContextLimit(tokens: number | undefined): void;
  /** Requests refused for their length, with the tokens the fake counted. */
  refused: { request: ChatRequest; tokens: number }[];
  /** Forgets recorded requests, queued replies and the handler. */
  reset(): void;
  close(): Promise<void>;
}

/**
 * Starts a fake OpenAI Chat Completions server on 127.0.0.1 that answers `POST /v1/chat/completions` with
 * scripted replies, as JSON or as an SSE stream when the request says `stream: true`.
 * Unscripted requests get HTTP 500 "fake model: no scripted reply", so a test that forgot one fails loudly.
 *
 * @example
 * const model = await startFakeOpenAI();
 * model.enqueue(reply.text('hello'));
 * const client = new OpenAI({ apiKey: 'sk-test', baseURL: model.baseURL, maxRetries: 0 });
 */
export async function startFakeOpenAI(): Promise<FakeOpenAI> {
  const requests: ChatRequest[] = [];
  const queue: ModelReply[] = [];
  let handler: ModelHandler | undefined;
  let served = 0;
  let contextLimit: number | undefined;
  const refused: FakeOpenAI['refused'] = [];
  const openStreams = new Set<ServerResponse>();

  const nextReply = async (request: ChatRequest, index: number): Promise<ModelReply | undefined> =>
    queue.shift() ?? (handler ? handler(request, index) : undefined);

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    served += 1;
    const requestId = `req_fake${served}`;
    const headers = { 'x-request-id': requestId, 'openai-processing-ms': '1' };
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname;
    if (req.method !== 'POST' || path !== '/v1/chat/completions') {
      sendJson(res, 404, openAIErrorBody(404, `Invalid URL (${req.method} ${path})`), headers);
      return;
    }
    const parsed = ChatRequestSchema.safeParse(parseJson(await readBody(req)));
    if (!parsed.success) {
      sendJson(
        res,
        400,
        openAIErrorBody(400, `fake model: invalid request: ${parsed.error.message}`),
        headers,
      );
      return;
    }
    const request = parsed.data;
    if (contextLimit !== undefined) {
      const tokens = await requestTokens(request);
      if (tokens > contextLimit) {
        refused.push({ request, tokens });
        sendJson(res, 400, contextLengthExceeded(contextLimit, tokens), headers);
        return;
      }
    }
    const index = requests.push(request) - 1;
    const scripted = await nextReply(request, index);
    if (scripted === undefined) {
      const last = JSON.stringify(request.messages.at(-1) ?? null).slice(0, 300);
      const message = `fake model: no scripted reply for request #${index + 1} (last message: ${last})`;
      sendJson(res, 500, openAIErrorBody(500, message), headers);
      return;
    }
    await send(res, scripted, request, { ...headers, id: `chatcmpl-fake${served}` }, openStreams);
  };

  const local = await listenLocal(handle);

  return {
    baseURL: `http://127.0.0.1:${local.port}/v1`,
    port: local.port,
    requests,
    enqueue: (...replies) => {
      queue.push(...replies);
    },
    setHandler: (next) => {
      handler = next;
    },
    queued: () => queue.length,
    waitForRequests: async (n, timeoutMs = 5000) => {
      await waitUntil(() => requests.length >= n, {
        timeoutMs,
        intervalMs: 10,
        message: `fake model: expected ${n} request(s) within ${timeoutMs} ms, got ${requests.length}`,
      });
      return requests;
    },
    breakOpenStreams: () => {
      const count = openStreams.size;
      for (const res of openStreams) res.socket?.resetAndDestroy();
      openStreams.clear();
      return count;
    },
    setContextLimit: (tokens) => {
      contextLimit = tokens;
    },
    refused,
    reset: () => {
      refused.length = 0;
      requests.length = 0;
      queue.length = 0;
      handler = undefined;
    },
    close: () => local.close(),
  };
}

type SendHeaders = Record<string, string> & { id: string };

async function send(
  res: ServerResponse,
  scripted: ModelReply,
  request: ChatRequest,
  h: SendHeaders,
  openStreams: Set<ServerResponse>,
): Promise<void> {
  const { id, ...headers } = h;
  switch (scripted.kind) {
    case 'hang':
      // Leave the response open: the client sees neither headers nor body until it gives up or we close.
      return;
    case 'delayed':
      await sleep(scripted.ms);
      if (!res.destroyed) await send(res, scripted.reply, request, h, openStreams);
      return;
    case 'held':
      await scripted.until;
      if (!res.destroyed) await send(res, scripted.reply, request, h, openStreams);
      return;
    case 'error':
      sendJson(res, scripted.status, scripted.body, { ...headers, ...scripted.headers });
      return;
    case 'raw':
      sendText(res, scripted.status, scripted.body, {
        'content-type': 'application/json',
        ...headers,
        ...scripted.headers,
      });
      return;
    case 'sse':
      res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', ...headers });
      for (const event of scripted.events) res.write(`${event}\n\n`);
      if (scripted.cut) {
        // Closed once the events are on the wire, before the body's end: the client reads them, then the break.
        res.write('', () => res.socket?.destroy());
        return;
      }
      if (scripted.open) {
        openStreams.add(res);
        res.once('close', () => openStreams.delete(res));
      } else res.end();
      return;
    default:
      sendCompletion(res, scripted, request, id, headers);
  }
}

function sendCompletion(
  res: ServerResponse,
  scripted: CompletionReply,
  request: ChatRequest,
  id: string,
  headers: Record<string, string>,
): void {
  const meta = {
    id,
    model: request.model,
    created: Math.floor(Date.now() / 1000),
    promptText: JSON.stringify(request.messages),
  };
  if (request.stream !== true) {
    sendJson(res, 200, completionBody(scripted, meta), headers);
    return;
  }
  res.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
    ...headers,
  });
  for (const chunk of streamChunks(scripted, meta, request.stream_options?.include_usage === true)) {
    res.write(`data: ${JSON.stringify(chunk)}\n\n`);
  }
  res.end('data: [DONE]\n\n');
}

/** The tokens of a request as a server counts them: each message's text in its template, and the tools' schemas. */
export async function requestTokens(request: ChatRequest): Promise<number> {
  const { countTokens } = await import('gpt-tokenizer/encoding/o200k_base');
  const count = (text: string) => countTokens(text, { disallowedSpecial: new Set() });
  let tokens = 3 + (request.tools ? count(JSON.stringify(request.tools)) : 0);
  for (const message of request.messages) {
    const content =
      typeof message.content === 'string' ? message.content : JSON.stringify(message.content ?? '');
    tokens += 4 + count(content) + (message.tool_calls ? count(JSON.stringify(message.tool_calls)) : 0);
  }
  return tokens;
}

/** OpenAI's answer to a request longer than the model's context, word for word. */
export function contextLengthExceeded(limit: number, tokens: number) {
  return {
    error: {
      message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`,
      type: 'invalid_request_error',
      param: 'messages',
      code: 'context_length_exceeded',
    },
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
