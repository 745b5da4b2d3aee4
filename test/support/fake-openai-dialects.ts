import type { ChatRequest } from './fake-openai.js';
import { type ModelReply, reply } from './fake-openai-replies.js';

/**
 * Hand-written minimal examples of how real OpenAI-compatible servers differ from OpenAI on the wire, one per
 * quirk, for the fake model server. Ids, texts and signatures are made up; the shapes are the servers'.
 */

type Json = Record<string, unknown>;

const DONE = 'data: [DONE]';

function chunk(delta: Json, finish: string | null = null, extra: Json = {}): Json {
  return {
    id: 'chatcmpl-dialect',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: 'dialect-model',
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...extra,
  };
}

/** A chunk whose choice has no `finish_reason` key at all (xAI, LiteLLM). */
function bareChunk(delta: Json): Json {
  return { id: 'chatcmpl-dialect', object: 'chat.completion.chunk', choices: [{ index: 0, delta }] };
}

const USAGE = { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 };
const args = (value: Json) => JSON.stringify(value);

export const dialect = {
  /** Mistral: the whole call in one fragment without `index` or `type`; finish_reason and usage on it. */
  noIndexWholeCall: (name: string, a: Json): ModelReply =>
    reply.sse([
      chunk({ role: 'assistant', content: '' }),
      chunk({ tool_calls: [{ id: 'Ab3De5Gh7', function: { name, arguments: args(a) } }] }, 'tool_calls', {
        usage: USAGE,
      }),
      DONE,
    ]),

  /**
   * Gemini 3: a call without `index` carrying `extra_content.google.thought_signature`, ended by
   * finish_reason "stop"; no usage.
   */
  signedCall: (name: string, a: Json, signature: string): ModelReply =>
    reply.sse([
      chunk(
        {
          role: 'assistant',
          tool_calls: [
            {
              extra_content: { google: { thought_signature: signature } },
              function: { arguments: args(a), name },
              id: 'function-call-1',
              type: 'function',
            },
          ],
        },
        'stop',
      ),
      DONE,
    ]),

  /** LiteLLM: the continuation carries `id: ""`, `type: "FUNCTION"` and `name: "null"`; no finish_reason key. */
  nullNameContinuation: (name: string, first: string, rest: string): ModelReply =>
    reply.sse([
      bareChunk({
        tool_calls: [{ index: 0, id: 'call-lite-1', type: 'FUNCTION', function: { name, arguments: first } }],
      }),
      bareChunk({
        tool_calls: [{ index: 0, id: '', type: 'FUNCTION', function: { name: 'null', arguments: rest } }],
      }),
      DONE,
    ]),

  /** Ollama: parallel calls, each whole in its own chunk, all at index 0 with distinct ids; no usage. */
  parallelAtIndexZero: (calls: { name: string; args: Json }[]): ModelReply =>
    reply.sse([
      ...calls.map((call, n) =>
        chunk({
          role: 'assistant',
          content: '',
          tool_calls: [
            {
              id: `call_oll${n}`,
              index: 0,
              type: 'function',
              function: { name: call.name, arguments: args(call.args) },
            },
          ],
        }),
      ),
      chunk({ role: 'assistant', content: '' }, 'tool_calls'),
      DONE,
    ]),

  /**
   * Alibaba Qwen: continuations repeat `type` and send `id: ""`, a trailing `arguments: ""` fragment, a chunk
   * without finish_reason, and usage only in a last chunk with `choices: []`.
   */
  emptyIdContinuation: (name: string, first: string, rest: string): ModelReply =>
    reply.sse([
      chunk({
        role: 'assistant',
        content: null,
        tool_calls: [{ index: 0, id: 'call_qw1', type: 'function', function: { name, arguments: first } }],
      }),
      chunk({ tool_calls: [{ index: 0, id: '', type: 'function', function: { arguments: rest } }] }),
      chunk({ tool_calls: [{ index: 0, id: '', type: 'function', function: { arguments: '' } }] }),
      bareChunk({ content: null }),
      { id: 'chatcmpl-dialect', object: 'chat.completion.chunk', choices: [], usage: USAGE },
      DONE,
    ]),

  /** A GLM model on Mistral: id and name with `arguments: ""`, then an id-less fragment with `name: ""`. */
  emptyNameContinuation: (name: string, a: Json): ModelReply =>
    reply.sse([
      chunk({
        tool_calls: [
          { id: 'chatcmpl-tool-1', type: 'function', function: { name, arguments: '' }, index: 0 },
        ],
        index: 0,
        content: '',
      }),
      chunk({
        tool_calls: [{ type: 'function', function: { name: '', arguments: args(a) }, index: 0 }],
        index: 0,
        content: '',
      }),
      chunk({ index: 0, content: '' }, 'tool_calls', { usage: USAGE }),
      DONE,
    ]),

  /** An Anthropic gateway: text first, then the only call at index 1, an `arguments: ""` fragment, no usage. */
  textThenCallAtIndexOne: (text: string, name: string, a: Json): ModelReply =>
    reply.sse([
      chunk({ role: 'assistant', content: text }),
      chunk({
        tool_calls: [{ index: 1, id: 'toolu_01', type: 'function', function: { name, arguments: '' } }],
      }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 1, function: { arguments: args(a) } }] }),
      chunk({}, 'tool_calls'),
      DONE,
    ]),

  /** DeepSeek thinking mode, streamed: `reasoning_content` deltas (content null) before the call. */
  reasoningThenCall: (reasoning: string[], name: string, a: Json): ModelReply =>
    reply.sse([
      chunk({ role: 'assistant', content: null, reasoning_content: '' }),
      ...reasoning.map((piece) => chunk({ content: null, reasoning_content: piece })),
      chunk({
        content: null,
        reasoning_content: null,
        tool_calls: [{ index: 0, id: 'call_00_ds', type: 'function', function: { name, arguments: '' } }],
      }),
      chunk({
        content: null,
        reasoning_content: null,
        tool_calls: [{ index: 0, function: { arguments: args(a) } }],
      }),
      chunk({ content: null, reasoning_content: null }, 'tool_calls', { usage: USAGE }),
      DONE,
    ]),

  /**
   * Hugging Face TGI 2.x: the call's `arguments` as a JSON object rather than a string, `description: null`
   * beside them, id "0", the whole call in one chunk.
   */
  objectArguments: (name: string, a: Json): ModelReply =>
    reply.sse([
      chunk({
        role: 'assistant',
        tool_calls: [
          { index: 0, id: '0', type: 'function', function: { description: null, name, arguments: a } },
        ],
      }),
      chunk({}, 'tool_calls'),
      DONE,
    ]),

  /** A non-streamed completion with the given message (for the fields each server puts there). */
  completion: (message: Json): ModelReply =>
    reply.raw(
      200,
      JSON.stringify({
        id: 'dialect-json',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'dialect-model',
        choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: 'tool_calls' }],
        usage: USAGE,
      }),
    ),

  /** Groq: HTTP 200, a reasoning delta, then an SSE `event: error` (a generated call failed validation). */
  errorEventInStream: (message: string): ModelReply =>
    reply.sse([
      chunk({ role: 'assistant', content: '' }),
      chunk({ reasoning: 'Thinking.', channel: 'analysis' }),
      `event: error\ndata: ${JSON.stringify({
        error: {
          message,
          type: 'invalid_request_error',
          code: 'tool_use_failed',
          failed_generation: '{"name": "create_note", "arguments": {}}',
          status_code: 400,
        },
      })}`,
    ]),

  /** OpenRouter: SSE comments, then a chunk with a top-level `error` next to choices, then `[DONE]`. */
  errorInChunk: (code: number, message: string): ModelReply =>
    reply.sse([
      ': OPENROUTER PROCESSING',
      chunk({ role: 'assistant', content: '', reasoning: 'We' }, 'length'),
      chunk({ role: 'assistant', content: '' }, null, { error: { code, message }, usage: USAGE }),
      DONE,
    ]),

  /** vLLM (2024): a 400 for `stream_options`, its body without the `{"error": …}` envelope. */
  strictRefusal: (field: string): ModelReply =>
    reply.error(400, {
      object: 'error',
      message: `[{'type': 'extra_forbidden', 'loc': ('body', '${field}'), 'msg': 'Extra inputs are not permitted'}]`,
      type: 'BadRequestError',
      param: null,
      code: 400,
    }),

  /** llama.cpp before streamed tool calls: a 500 for `stream: true` with tools. */
  cannotStreamWithTools: (): ModelReply =>
    reply.error(500, { error: { code: 500, message: 'Cannot use tools with stream', type: 'server_error' } }),

  /** Gemini: a 400 whose body is a JSON array of errors. */
  arrayErrorBody: (message: string): ModelReply =>
    reply.error(400, [{ error: { code: 400, message, status: 'INVALID_ARGUMENT' } }]),
};

type RequestMessage = ChatRequest['messages'][number];
const withCalls = (m: RequestMessage) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0;

function signatureOf(call: unknown): unknown {
  const extra = (call as { extra_content?: { google?: { thought_signature?: unknown } } }).extra_content;
  return extra?.google?.thought_signature;
}

/** What real servers refuse in a request, as predicates on what the fake received. */
export const refuses = {
  /** vLLM (2024): any request carrying `stream_options`. */
  streamOptions: (request: ChatRequest): boolean => request.stream_options != null,
  /** DeepSeek thinking mode: an assistant tool-call message sent back without its `reasoning_content`. */
  callsWithoutReasoning: (request: ChatRequest): boolean =>
    request.messages.some((m) => withCalls(m) && typeof m.reasoning_content !== 'string'),
  /** Gemini 3: a tool call sent back without `extra_content.google.thought_signature`. */
  callsWithoutSignature: (request: ChatRequest): boolean =>
    request.messages.some(
      (m) => withCalls(m) && (m.tool_calls ?? []).some((c) => typeof signatureOf(c) !== 'string'),
    ),
};
