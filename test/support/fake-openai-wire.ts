import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionMessage,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import type { FinishReason, ModelReply, ScriptedToolCall } from './fake-openai-replies.js';

/** A reply that becomes a `chat.completion` body (as opposed to an HTTP error, raw bytes, or silence). */
export type CompletionReply = Extract<
  ModelReply,
  { kind: 'text' | 'tool_calls' | 'refusal' | 'empty_choices' }
>;

interface Meta {
  id: string;
  model: string;
  created: number;
  promptText: string;
}

/** A rough token count (4 characters a token) so that `usage` holds plausible numbers. */
function tokens(text: string): number {
  return Math.max(1, Math.ceil(text.length / 4));
}

function usage(meta: Meta, reply: CompletionReply): CompletionUsage {
  const prompt = tokens(meta.promptText);
  const completion = tokens(JSON.stringify(reply));
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: { reasoning_tokens: 0, audio_tokens: 0 },
  };
}

function message(reply: Exclude<CompletionReply, { kind: 'empty_choices' }>): ChatCompletionMessage {
  switch (reply.kind) {
    case 'text':
      return { role: 'assistant', content: reply.text, refusal: null, annotations: [] };
    case 'refusal':
      return { role: 'assistant', content: null, refusal: reply.refusal, annotations: [] };
    case 'tool_calls':
      return {
        role: 'assistant',
        content: reply.text,
        refusal: null,
        annotations: [],
        tool_calls: reply.calls.map((c) => ({
          id: c.id,
          type: 'function',
          function: { name: c.name, arguments: c.arguments },
        })),
      };
  }
}

function finishReason(reply: CompletionReply): FinishReason {
  if (reply.kind === 'tool_calls') return 'tool_calls';
  if (reply.kind === 'text') return reply.finishReason;
  return 'stop';
}

/** The non-streaming `chat.completion` object, shaped exactly as the OpenAI API returns it. */
export function completionBody(reply: CompletionReply, meta: Meta): ChatCompletion {
  const choices: ChatCompletion.Choice[] =
    reply.kind === 'empty_choices'
      ? []
      : [{ index: 0, message: message(reply), finish_reason: finishReason(reply), logprobs: null }];
  return {
    id: meta.id,
    object: 'chat.completion',
    created: meta.created,
    model: meta.model,
    choices,
    usage: usage(meta, reply),
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  };
}

/** Splits text into about `parts` pieces on code-point boundaries (never inside a surrogate pair). */
export function splitText(text: string, parts = 3): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const size = Math.max(1, Math.ceil(chars.length / parts));
  const pieces: string[] = [];
  for (let i = 0; i < chars.length; i += size) pieces.push(chars.slice(i, i + size).join(''));
  return pieces;
}

function toolCallDeltas(calls: ScriptedToolCall[]): ChatCompletionChunk.Choice.Delta[] {
  const deltas: ChatCompletionChunk.Choice.Delta[] = [];
  calls.forEach((call, index) => {
    // The first fragment of each call carries index, id, type and name; later ones only argument text.
    deltas.push({
      tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
    });
    for (const piece of splitText(call.arguments)) {
      deltas.push({ tool_calls: [{ index, function: { arguments: piece } }] });
    }
  });
  return deltas;
}

function contentDeltas(reply: CompletionReply): ChatCompletionChunk.Choice.Delta[] {
  switch (reply.kind) {
    case 'text':
      return splitText(reply.text).map((content) => ({ content }));
    case 'refusal':
      return splitText(reply.refusal).map((refusal) => ({ refusal }));
    case 'tool_calls':
      return [...splitText(reply.text ?? '').map((content) => ({ content })), ...toolCallDeltas(reply.calls)];
    case 'empty_choices':
      return [];
  }
}

/**
 * The `chat.completion.chunk` objects of a streamed answer: a role delta, content or tool-call fragments,
 * a final chunk with `finish_reason`, and (with `stream_options.include_usage`) a usage chunk with no choices.
 */
export function streamChunks(
  reply: CompletionReply,
  meta: Meta,
  includeUsage: boolean,
): ChatCompletionChunk[] {
  const base = {
    id: meta.id,
    object: 'chat.completion.chunk' as const,
    created: meta.created,
    model: meta.model,
  };
  const extra = includeUsage ? { usage: null } : {};
  const chunk = (
    delta: ChatCompletionChunk.Choice.Delta,
    finish: FinishReason | null,
  ): ChatCompletionChunk => ({
    ...base,
    system_fingerprint: 'fp_fake',
    choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
    ...extra,
  });
  const chunks: ChatCompletionChunk[] = [];
  if (reply.kind !== 'empty_choices') {
    chunks.push(
      chunk({ role: 'assistant', content: reply.kind === 'refusal' ? null : '', refusal: null }, null),
    );
    for (const delta of contentDeltas(reply)) chunks.push(chunk(delta, null));
    chunks.push(chunk({}, finishReason(reply)));
  } else {
    chunks.push({ ...base, choices: [], ...extra });
  }
  if (includeUsage) chunks.push({ ...base, choices: [], usage: usage(meta, reply) });
  return chunks;
}
