import { z } from 'zod';
import type { ToolCall } from './history.js';
import { ModelError, type ModelResponse } from './model.js';

/** What we read of one `chat.completion.chunk`; validated, because any OpenAI-compatible server may answer. */
const chunkSchema = z.object({
  choices: z
    .array(
      z.object({
        delta: z
          .object({
            content: z.string().nullish(),
            tool_calls: z
              .array(
                z.object({
                  index: z.number().int().min(0),
                  id: z.string().nullish(),
                  function: z
                    .object({ name: z.string().nullish(), arguments: z.string().nullish() })
                    .nullish(),
                }),
              )
              .nullish(),
          })
          .nullish(),
      }),
    )
    .nullish(),
  usage: z
    .object({ prompt_tokens: z.number(), completion_tokens: z.number(), total_tokens: z.number() })
    .nullish(),
});

/**
 * Assembles a streamed Chat Completions answer into the same response a non-streamed call gives: text deltas
 * are concatenated (and handed to `onTextDelta` as they arrive), tool-call fragments are joined by their
 * index (the first fragment carries id and name, later ones only argument text).
 */
export async function readCompletionStream(
  chunks: AsyncIterable<unknown>,
  onTextDelta: (text: string) => void,
): Promise<ModelResponse> {
  let text = '';
  let sawChoice = false;
  const calls = new Map<number, { callId: string; name: string; arguments: string }>();
  let usage: ModelResponse['usage'] = { promptTokens: 0, completionTokens: 0, totalTokens: 0 };
  for await (const raw of chunks) {
    const parsed = chunkSchema.safeParse(raw);
    if (!parsed.success) {
      throw new ModelError('bad_response', `Unreadable stream chunk: ${parsed.error.issues[0]?.message}`);
    }
    const { choices, usage: chunkUsage } = parsed.data;
    if (chunkUsage) {
      usage = {
        promptTokens: chunkUsage.prompt_tokens,
        completionTokens: chunkUsage.completion_tokens,
        totalTokens: chunkUsage.total_tokens,
      };
    }
    const delta = choices?.[0]?.delta;
    if (choices && choices.length > 0) sawChoice = true;
    if (!delta) continue;
    if (delta.content) {
      text += delta.content;
      onTextDelta(delta.content);
    }
    for (const fragment of delta.tool_calls ?? []) {
      const call = calls.get(fragment.index) ?? { callId: '', name: '', arguments: '' };
      if (fragment.id) call.callId = fragment.id;
      if (fragment.function?.name) call.name += fragment.function.name;
      if (fragment.function?.arguments) call.arguments += fragment.function.arguments;
      calls.set(fragment.index, call);
    }
  }
  if (!sawChoice) throw new ModelError('bad_response', 'Unreadable completion: the response has no choices');
  const toolCalls: ToolCall[] = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  if (toolCalls.some((call) => call.callId === '' || call.name === '')) {
    throw new ModelError('bad_response', 'Unreadable completion: a streamed tool call has no id or name');
  }
  return { text: text === '' ? null : text, toolCalls, usage };
}
