import type { ServerFields } from '../../agent/history.js';

/**
 * Fields of an assistant message that carries tool calls which a server needs back on the next request:
 * DeepSeek's thinking mode refuses (400) a tool-call message sent back without its `reasoning_content`.
 */
const MESSAGE_FIELDS = ['reasoning_content'] as const;

/** Fields of a tool call a server needs back with it: Gemini 3's `extra_content.google.thought_signature`. */
const TOOL_CALL_FIELDS = ['extra_content'] as const;

function pick(source: Record<string, unknown>, keys: readonly string[]): ServerFields | undefined {
  const picked: ServerFields = {};
  for (const key of keys) {
    const value = source[key];
    if (value !== undefined && value !== null) picked[key] = value;
  }
  return Object.keys(picked).length > 0 ? picked : undefined;
}

/** What to keep of an assistant message: only when it carries tool calls, the fields sent back with it. */
export function messageServerFields(
  message: Record<string, unknown>,
  hasToolCalls: boolean,
): ServerFields | undefined {
  return hasToolCalls ? pick(message, MESSAGE_FIELDS) : undefined;
}

export function toolCallServerFields(call: Record<string, unknown>): ServerFields | undefined {
  return pick(call, TOOL_CALL_FIELDS);
}
