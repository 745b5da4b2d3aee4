import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { ModelError } from '../../agent/model.js';
import { isBrokenOff } from './cut-answers.js';

/** What a server said when it failed a request, read from wherever it put it. */
export interface ServerError {
  /** HTTP status, or the status an error inside a stream claims (`status_code`, a numeric `code`). */
  status: number | undefined;
  message: string | undefined;
  code: string | undefined;
  type: string | undefined;
  /** The request field that failed validation, when the server names one. */
  param: string | undefined;
  /** True for an error sent inside a stream after HTTP 200. */
  inStream: boolean;
  /** The context the server says it has (llama.cpp's `n_ctx`), when it says so in a field. */
  contextTokens: number | undefined;
}

/**
 * Error bodies of failed responses, kept verbatim: the openai SDK reads only `{"error": {...}}` and drops a
 * body without that envelope (vLLM's `{"object": "error", ...}`, Gemini's JSON array, plain text). Wraps
 * `fetch` so that each error response's text is kept, keyed by the response's headers (the SDK hands those
 * to the error it throws). A refusal that no retry can help (a server that cannot stream with tools, which
 * llama.cpp answers with a 500) is marked `x-should-retry: false`, so the SDK does not send it again.
 */
export class ErrorBodies {
  readonly #bodies = new WeakMap<Headers, string>();

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const response = await fetch(input, init);
    if (response.ok) return response;
    const text = await response.text().catch(() => '');
    const headers = new Headers(response.headers);
    if (cannotStreamWithTools(text)) headers.set('x-should-retry', 'false');
    const copy = new Response(text, { status: response.status, statusText: response.statusText, headers });
    this.#bodies.set(copy.headers, text);
    return copy;
  };

  bodyOf(error: APIError): string | undefined {
    return error.headers ? this.#bodies.get(error.headers) : undefined;
  }
}

/** The words of a server that cannot stream an answer when the request has tools (llama.cpp before 2025-05). */
export function cannotStreamWithTools(message: string | undefined): boolean {
  if (message === undefined) return false;
  const both = /\btools?\b[^\n]*\bstream|\bstream[^\n]*\btools?\b/i.test(message);
  return (
    both && /\b(cannot|can't|not supported|unsupported|does not support|doesn't support)\b/i.test(message)
  );
}

/** Whether the server refused the request because of its `stream_options` field. */
export function refusesStreamOptions(error: ServerError): boolean {
  const refused = error.status === 400 || error.status === 422;
  return refused && `${error.param ?? ''} ${error.message ?? ''}`.includes('stream_options');
}

type Json = Record<string, unknown>;
const isObject = (value: unknown): value is Json =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const text = (value: unknown): string | undefined =>
  typeof value === 'string' ? value : typeof value === 'number' ? String(value) : undefined;

/** The error object inside a body: `{"error": {...}}`, `[{"error": {...}}]`, or the body itself. */
function errorObject(body: unknown): Json | undefined {
  const first = Array.isArray(body) ? body[0] : body;
  if (!isObject(first)) return undefined;
  return isObject(first.error) ? first.error : first;
}

function parse(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return undefined;
  }
}

/** Reads what the server said from an SDK error and, when kept, the raw body of the response. */
export function readServerError(error: APIError, rawBody: string | undefined): ServerError {
  const inStream = error.status === undefined;
  const parsed = rawBody === undefined ? undefined : parse(rawBody);
  const object = errorObject(parsed) ?? (isObject(error.error) ? error.error : undefined);
  const plain =
    rawBody !== undefined && parsed === undefined && rawBody.trim() !== '' ? rawBody.trim() : undefined;
  const claimed = object?.status_code ?? object?.code;
  return {
    status: error.status ?? (typeof claimed === 'number' ? claimed : undefined),
    message: text(object?.message) ?? plain,
    code: text(object?.code),
    type: text(object?.type) ?? text(object?.status),
    param: text(object?.param),
    inStream,
    contextTokens: typeof object?.n_ctx === 'number' ? object.n_ctx : undefined,
  };
}

/** How the server's failure is logged: its status, code, field and own words. */
function describe(server: ServerError): string {
  const parts = [
    server.status === undefined ? undefined : `HTTP ${server.status}`,
    server.code === undefined || server.code === String(server.status) ? undefined : `code ${server.code}`,
    server.type === undefined ? undefined : `type ${server.type}`,
    server.param === undefined ? undefined : `param ${server.param}`,
  ].filter((part) => part !== undefined);
  const where = server.inStream ? 'inside the stream' : 'in its response';
  return `${parts.length > 0 ? ` (${parts.join(', ')})` : ''} ${where}: ${server.message ?? 'no message'}`;
}

/**
 * The words of each server that refuses a request longer than the model's context, with where each says how
 * many tokens that context holds: OpenAI and DeepSeek ("This model's maximum context length is N tokens", code
 * `context_length_exceeded`, as Groq), vLLM (the same sentence, or "… is longer than the maximum model length of
 * N"), llama.cpp (`exceed_context_size_error`, "the request exceeds the available context size"), Mistral
 * ("… too large for model with N maximum context length"), Gemini ("The input token count (…) exceeds the
 * maximum number of tokens allowed (N)"), Anthropic's compatible endpoint ("prompt is too long: … > N maximum").
 * Ollama cuts a long prompt silently instead: only the budget protects it.
 */
const TOO_LONG_CODES = /context_length_exceeded|exceed_context_size|string_above_max_length/i;
const TOO_LONG_WORDS = [
  /maximum context length is (\d+)/i,
  /longer than the maximum model length(?: of (\d+))?/i,
  /exceeds the available context size/i,
  /too large for model with (\d+) maximum context length/i,
  /input token count \(\d+\) exceeds the maximum number of tokens allowed(?: \((\d+)\))?/i,
  /prompt is too long(?:: \d+ tokens > (\d+))?/i,
  /context (?:length|window|size) (?:of \d+ tokens )?(?:is )?exceeded/i,
];

/** Whether the server refused the request as longer than its context, and the context it named, if it did. */
export function tooLong(server: ServerError): { contextTokens: number | undefined } | undefined {
  const words = server.message ?? '';
  const coded = TOO_LONG_CODES.test(`${server.code ?? ''} ${server.type ?? ''}`);
  const match = TOO_LONG_WORDS.map((pattern) => pattern.exec(words)).find((found) => found !== null);
  if (!coded && !match) return undefined;
  const stated = match?.[1] === undefined ? server.contextTokens : Number(match[1]);
  return { contextTokens: stated !== undefined && Number.isSafeInteger(stated) ? stated : undefined };
}

/**
 * What failed, for the runner: rate limited or overloaded, unavailable, timed out, broken off mid-answer,
 * longer than the model's context, refused (with the server's reason), or unreadable. A refusal is never retried; the SDK retries 429, 5xx and
 * timeouts before this, the client retries a response that broke off.
 */
export function toModelError(error: unknown, bodies: ErrorBodies): ModelError {
  const options = { cause: error };
  if (error instanceof ModelError) return error;
  if (error instanceof APIConnectionTimeoutError)
    return new ModelError('timeout', 'Model request timed out', options);
  if (error instanceof APIConnectionError)
    return new ModelError('unavailable', 'Model server unreachable', options);
  if (isBrokenOff(error)) {
    return new ModelError('interrupted', 'Model connection broke off in the middle of the response', options);
  }
  if (!(error instanceof APIError)) {
    return new ModelError('bad_response', 'Model response could not be read', options);
  }
  const server = readServerError(error, bodies.bodyOf(error));
  const said = describe(server);
  const status = server.status;
  const words = `${server.code ?? ''} ${server.type ?? ''}`;
  if (status === 429 || (status === undefined && /rate.?limit/i.test(words))) {
    return new ModelError('rate_limited', `Model rate limited${said}`, options);
  }
  // Some servers answer 500 to a prompt over their context; no retry of the same request can help it.
  const exceeded = status === undefined || status <= 500 ? tooLong(server) : undefined;
  if (exceeded) {
    return new ModelError('too_long', `Model request longer than its context${said}`, {
      ...options,
      reason: server.message,
      contextTokens: exceeded.contextTokens,
    });
  }
  if (cannotStreamWithTools(server.message)) {
    return new ModelError('rejected', `Model request refused${said}`, { ...options, reason: server.message });
  }
  if (
    (status !== undefined && status >= 500) ||
    (status === undefined && /overload|server_error|unavailable/i.test(words))
  ) {
    return new ModelError('unavailable', `Model server error${said}`, options);
  }
  // Credentials are the bot's settings; the server's words may quote part of the key, so they stay in the log.
  const reason = status === 401 || status === 403 ? undefined : server.message;
  return new ModelError('rejected', `Model request refused${said}`, { ...options, reason });
}
