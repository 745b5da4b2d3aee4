import { z } from 'zod';
import type { ServerFields, ToolCall } from '../../agent/history.js';
import { ModelError, type ModelResponse } from '../../agent/model.js';
import { messageServerFields, toolCallServerFields } from './server-fields.js';

/** `usage` as servers send it (some leave counts out). */
export const completionUsageSchema = z.object({
  prompt_tokens: z.number().nullish(),
  completion_tokens: z.number().nullish(),
  total_tokens: z.number().nullish(),
});

/** Usage as the runner counts it; a server that leaves a count out counts 0 for it. */
export function readUsage(
  usage: z.infer<typeof completionUsageSchema> | null | undefined,
): ModelResponse['usage'] {
  return {
    promptTokens: usage?.prompt_tokens ?? 0,
    completionTokens: usage?.completion_tokens ?? 0,
    totalTokens: usage?.total_tokens ?? 0,
  };
}

/**
 * A call's arguments: a JSON string as OpenAI sends them, or the JSON object itself (Hugging Face TGI 2.x). An
 * object is serialised, since the history and the request sent back carry the OpenAI wire format's string.
 */
export const toolArgumentsSchema = z
  .union([z.string(), z.record(z.string(), z.unknown())])
  .nullish()
  .transform((value) =>
    value === null || value === undefined || typeof value === 'string' ? value : JSON.stringify(value),
  );

/**
 * One tool-call fragment as servers really send it: `index` may be missing (Mistral, Gemini), `id` and
 * `name` may be empty or the string "null" on continuations (Alibaba, LiteLLM), `type` may be missing or
 * upper case; other fields (Gemini's `extra_content`) are kept as they came.
 */
const fragmentSchema = z.looseObject({
  index: z.number().int().min(0).nullish(),
  id: z.string().nullish(),
  function: z.object({ name: z.string().nullish(), arguments: toolArgumentsSchema }).nullish(),
});

/** What we read of one `chat.completion.chunk`; validated, because any OpenAI-compatible server may answer. */
const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        delta: z
          .object({
            content: z.string().nullish(),
            reasoning_content: z.string().nullish(),
            tool_calls: z.array(fragmentSchema).nullish(),
          })
          .nullish(),
        finish_reason: z.string().nullish(),
      }),
    )
    .nullish(),
  usage: completionUsageSchema.nullish(),
});

type Fragment = z.infer<typeof fragmentSchema>;
interface Building {
  callId: string;
  name: string;
  arguments: string;
  serverFields?: ServerFields;
}

/**
 * Joins tool-call fragments into calls. A fragment belongs to the call at its `index`, unless it brings an id
 * other than that call's (Ollama sends parallel calls all at index 0, each with its own id); a fragment
 * without `index` belongs to the call with its id, else continues the last call. The name is the first
 * non-empty one (never a concatenation: LiteLLM repeats "null"), the id the first non-empty one.
 */
class ToolCallAssembler {
  readonly #calls: Building[] = [];
  readonly #byIndex = new Map<number, Building>();

  add(fragment: Fragment): void {
    const id = fragment.id ? fragment.id : undefined;
    const index = fragment.index ?? undefined;
    let call: Building | undefined;
    if (index !== undefined) {
      call = this.#byIndex.get(index);
      if (call && id && call.callId && call.callId !== id) call = undefined;
    } else {
      call = id ? this.#calls.find((c) => c.callId === id) : this.#calls.at(-1);
    }
    if (!call) {
      call = { callId: '', name: '', arguments: '' };
      this.#calls.push(call);
    }
    if (index !== undefined) this.#byIndex.set(index, call);
    if (id && !call.callId) call.callId = id;
    const name = fragment.function?.name;
    if (name && name !== 'null' && !call.name) call.name = name;
    if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
    const serverFields = toolCallServerFields(fragment);
    if (serverFields) call.serverFields = { ...serverFields, ...call.serverFields };
  }

  /** The calls in the order they began; an empty id is made unique later, a missing name is unreadable. */
  calls(): ToolCall[] {
    if (this.#calls.some((call) => call.name === '')) {
      throw new ModelError('bad_response', 'Unreadable completion: a streamed tool call has no name');
    }
    return this.#calls.map(({ serverFields, ...call }) => (serverFields ? { ...call, serverFields } : call));
  }
}

/**
 * Assembles a streamed Chat Completions answer into the same response a non-streamed call gives: text deltas
 * are concatenated (and handed to `onTextDelta` as they arrive), tool-call fragments are joined into calls,
 * `reasoning_content` deltas are kept (never shown) for a message with tool calls. Usage may come on any
 * chunk or in a last chunk without choices. Which `finish_reason` came is not relied on (servers send "stop"
 * after tool calls), but that one came or the stream said `data: [DONE]` (`sawEnd`, asked at the end) is: a
 * stream that stopped without either was cut off, and its text and tool calls (their arguments perhaps
 * truncated) are no answer.
 */
export async function readCompletionStream(
  chunks: AsyncIterable<unknown>,
  onTextDelta: (text: string) => void,
  sawEnd: () => boolean,
): Promise<ModelResponse> {
  let text = '';
  let reasoning: string | undefined;
  let sawChoice = false;
  let finished = false;
  const assembler = new ToolCallAssembler();
  let usage = readUsage(undefined);
  for await (const raw of chunks) {
    const parsed = chunkSchema.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new ModelError(
        'bad_response',
        `Unreadable stream chunk at ${issue?.path.join('.') || '(root)'}: ${issue?.message}`,
      );
    }
    const { choices, usage: chunkUsage } = parsed.data;
    if (chunkUsage) usage = readUsage(chunkUsage);
    const delta = choices?.[0]?.delta;
    if (choices && choices.length > 0) sawChoice = true;
    if (choices?.some((choice) => choice.finish_reason)) finished = true;
    if (!delta) continue;
    if (delta.content) {
      text += delta.content;
      onTextDelta(delta.content);
    }
    if (typeof delta.reasoning_content === 'string') reasoning = (reasoning ?? '') + delta.reasoning_content;
    for (const fragment of delta.tool_calls ?? []) assembler.add(fragment);
  }
  if (!finished && !sawEnd()) {
    throw new ModelError('interrupted', 'Model stream ended without a finish reason or [DONE]: cut off');
  }
  if (!sawChoice) throw new ModelError('bad_response', 'Unreadable completion: the response has no choices');
  const toolCalls = assembler.calls();
  const serverFields = messageServerFields({ reasoning_content: reasoning }, toolCalls.length > 0);
  return { text: text === '' ? null : text, toolCalls, usage, ...(serverFields ? { serverFields } : {}) };
}
