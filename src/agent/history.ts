import { z } from 'zod';

export const toolCallSchema = z.object({ callId: z.string(), name: z.string(), arguments: z.string() });
export type ToolCall = z.infer<typeof toolCallSchema>;

export const TOOL_OUTPUT_STATUSES = ['ok', 'error', 'rejected', 'expired', 'cancelled', 'unknown'] as const;

const userMessageSchema = z.object({
  text: z.string(),
  userId: z.string(),
  messageTs: z.string().optional(),
});
const toolOutputSchema = z.object({
  callId: z.string(),
  name: z.string(),
  output: z.string(),
  status: z.enum(TOOL_OUTPUT_STATUSES),
});

/** Every history item kind with its stored data, validated whenever history is read back. */
export const historyItemSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('user_message'), data: userMessageSchema }),
  z.object({ kind: z.literal('assistant_message'), data: z.object({ text: z.string() }) }),
  z.object({ kind: z.literal('tool_call'), data: toolCallSchema }),
  z.object({ kind: z.literal('tool_output'), data: toolOutputSchema }),
]);

export type HistoryItem = z.infer<typeof historyItemSchema>;
export type ToolOutputItem = Extract<HistoryItem, { kind: 'tool_output' }>;

/** A stored item with the run and turn that produced it. */
export type StoredItem = HistoryItem & { runId: string | null; turn: number | null };

export type ChatMessage =
  | { role: 'system'; content: string }
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls: ToolCall[] }
  | { role: 'tool'; callId: string; content: string };

const MISSING_OUTPUT = 'The tool call did not complete; no output was recorded.';

/**
 * Turns stored history into Chat Completions messages. An assistant message and the tool calls of the same
 * run and turn become one assistant message; any call left without an output (a cancelled run) gets a
 * placeholder so the conversation stays valid for the model.
 */
export function historyToMessages(items: readonly StoredItem[]): ChatMessage[] {
  const messages: ChatMessage[] = [];
  const answered = new Set(items.flatMap((item) => (item.kind === 'tool_output' ? [item.data.callId] : [])));
  let open: { message: Extract<ChatMessage, { role: 'assistant' }>; key: string } | undefined;
  const flushMissing = () => {
    if (!open) return;
    for (const call of open.message.toolCalls) {
      if (!answered.has(call.callId))
        messages.push({ role: 'tool', callId: call.callId, content: MISSING_OUTPUT });
    }
    open = undefined;
  };
  for (const item of items) {
    const key = `${item.runId}:${item.turn}`;
    if (item.kind === 'assistant_message' || item.kind === 'tool_call') {
      if (!open || open.key !== key) {
        flushMissing();
        const message: Extract<ChatMessage, { role: 'assistant' }> = {
          role: 'assistant',
          content: null,
          toolCalls: [],
        };
        messages.push(message);
        open = { message, key };
      }
      if (item.kind === 'assistant_message') open.message.content = item.data.text;
      else open.message.toolCalls.push(item.data);
      continue;
    }
    if (item.kind === 'tool_output') {
      messages.push({ role: 'tool', callId: item.data.callId, content: item.data.output });
      continue;
    }
    flushMissing();
    messages.push({ role: 'user', content: item.data.text });
  }
  flushMissing();
  return messages;
}
