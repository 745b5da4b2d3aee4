import { randomBytes } from 'node:crypto';

/** One tool call the fake model should make. `arguments` as an object is JSON-encoded; a string is sent verbatim. */
export interface ToolCallSpec {
  name: string;
  arguments: string | Record<string, unknown>;
  id?: string;
}

/** A tool call as it goes on the wire. */
export interface ScriptedToolCall {
  id: string;
  name: string;
  arguments: string;
}

export type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

/** One scripted answer of the fake model. Build these with `reply.*`. */
export type ModelReply =
  | { kind: 'text'; text: string; finishReason: FinishReason }
  | { kind: 'tool_calls'; text: string | null; calls: ScriptedToolCall[] }
  | { kind: 'refusal'; refusal: string }
  | { kind: 'empty_choices' }
  | { kind: 'error'; status: number; body: unknown; headers: Record<string, string> }
  | { kind: 'raw'; status: number; body: string; headers: Record<string, string> }
  /**
   * An SSE body (HTTP 200) written event by event, each followed by a blank line, with no `[DONE]` added; `open`
   * leaves it open (until `breakOpenStreams`), `cut` closes the connection after the events, mid-body.
   */
  | { kind: 'sse'; events: string[]; open?: boolean; cut?: boolean }
  | { kind: 'hang' }
  | { kind: 'delayed'; ms: number; reply: ModelReply }
  /** `reply` once `until` resolves, unless the client has given up on the request by then. */
  | { kind: 'held'; until: Promise<unknown>; reply: ModelReply };

/** OpenAI's `error.type` for common statuses, so the body looks like what the SDK would see for real. */
function errorType(status: number): string {
  if (status === 401) return 'invalid_authentication';
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
}

/** An OpenAI-style error body: `{ error: { message, type, param, code } }`. */
export function openAIErrorBody(status: number, message: string): { error: Record<string, unknown> } {
  const type = errorType(status);
  return { error: { message, type, param: null, code: status === 429 ? 'rate_limit_exceeded' : null } };
}

/** Real OpenAI tool call ids look like `call_` followed by 24 random characters. */
export function newToolCallId(): string {
  return `call_${randomBytes(12).toString('hex')}`;
}

/**
 * Builders for scripted model replies.
 *
 * @example
 * fakeOpenAI.enqueue(
 *   reply.toolCalls([{ name: 'delete_file', arguments: { path: '/tmp/x' } }]),
 *   reply.text('Done.'),
 * );
 */
export const reply = {
  /** An assistant message with `finish_reason: 'stop'` (or another reason, e.g. `'length'`). */
  text: (text: string, finishReason: FinishReason = 'stop'): ModelReply => ({
    kind: 'text',
    text,
    finishReason,
  }),
  /** Tool calls with `finish_reason: 'tool_calls'`; ids `call_…` are generated when absent. */
  toolCalls: (calls: ToolCallSpec[], text?: string): ModelReply => ({
    kind: 'tool_calls',
    text: text ?? null,
    calls: calls.map((c) => ({
      id: c.id ?? newToolCallId(),
      name: c.name,
      arguments: typeof c.arguments === 'string' ? c.arguments : JSON.stringify(c.arguments),
    })),
  }),
  /** A model refusal: `content: null`, `refusal: text`. */
  refusal: (refusal: string): ModelReply => ({ kind: 'refusal', refusal }),
  /** A well-formed completion with `choices: []`. */
  emptyChoices: (): ModelReply => ({ kind: 'empty_choices' }),
  /** An HTTP error with an OpenAI-style body, e.g. `reply.error(429, undefined, { 'retry-after': '1' })`. */
  error: (status: number, body?: unknown, headers: Record<string, string> = {}): ModelReply => ({
    kind: 'error',
    status,
    body: body ?? openAIErrorBody(status, `fake model: scripted HTTP ${status}`),
    headers,
  }),
  /** Any status with a body sent byte for byte (content type JSON unless overridden): malformed replies. */
  raw: (status: number, body: string, headers: Record<string, string> = {}): ModelReply => ({
    kind: 'raw',
    status,
    body,
    headers,
  }),
  /**
   * A stream exactly as given: a string is one SSE event written verbatim (`data: …`, `event: error\ndata: …`,
   * `: comment`), an object becomes `data: <its JSON>`. Add `'data: [DONE]'` where the server sends it.
   */
  sse: (events: (string | Record<string, unknown>)[]): ModelReply => ({
    kind: 'sse',
    events: events.map((e) => (typeof e === 'string' ? e : `data: ${JSON.stringify(e)}`)),
  }),
  /**
   * A stream that breaks off: the events are written, then the connection is closed in the middle of the body
   * (no end of the chunked body, no `[DONE]`), as when a proxy or the server drops it mid-answer.
   */
  sseCut: (events: (string | Record<string, unknown>)[]): ModelReply => ({
    kind: 'sse',
    cut: true,
    events: events.map((e) => (typeof e === 'string' ? e : `data: ${JSON.stringify(e)}`)),
  }),
  /** A streamed answer that writes `text` and then hangs, the stream left open (a model that stalls mid-answer). */
  streamThenHang: (text: string): ModelReply => ({
    kind: 'sse',
    open: true,
    events: [
      `data: ${JSON.stringify({
        id: 'chatcmpl-stall',
        object: 'chat.completion.chunk',
        created: 1,
        model: 'fake',
        choices: [{ index: 0, delta: { role: 'assistant', content: text }, finish_reason: null }],
      })}`,
    ],
  }),
  /** Never answers; the connection is dropped only when the fake closes. For client timeouts. */
  hang: (): ModelReply => ({ kind: 'hang' }),
  /** Answers `inner` after `ms` milliseconds. */
  delayed: (ms: number, inner: ModelReply): ModelReply => ({ kind: 'delayed', ms, reply: inner }),
};
