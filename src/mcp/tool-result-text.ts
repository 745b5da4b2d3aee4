import { z } from 'zod';

const contentSchema = z.array(
  z.looseObject({
    type: z.string(),
    text: z.string().optional(),
    mimeType: z.string().optional(),
    data: z.string().optional(),
    uri: z.string().optional(),
    resource: z.looseObject({ uri: z.string(), text: z.string().optional() }).optional(),
  }),
);

const resultSchema = z.looseObject({
  content: contentSchema.optional(),
  structuredContent: z.record(z.string(), z.unknown()).optional(),
  isError: z.boolean().optional(),
  /** Results of servers on protocol version 2024-10-07 and older. */
  toolResult: z.unknown().optional(),
});

export type ToolResultText = { ok: true; text: string } | { ok: false; error: string };

/**
 * The text the model reads for an MCP `tools/call` result: text parts verbatim, other parts named, the
 * structured content as JSON when there is nothing else. A result flagged `isError` is a tool failure.
 */
export function toolResultText(result: unknown): ToolResultText {
  const parsed = resultSchema.safeParse(result);
  if (!parsed.success) return { ok: false, error: 'The MCP server sent a result that is not a tool result.' };
  const { content = [], structuredContent, isError, toolResult } = parsed.data;
  const parts = content.map((part) => {
    if (part.type === 'text') return part.text ?? '';
    if (part.type === 'resource') return part.resource?.text ?? `[resource ${part.resource?.uri ?? ''}]`;
    if (part.type === 'resource_link') return `[resource ${part.uri ?? ''}]`;
    return `[${part.type}${part.mimeType ? ` ${part.mimeType}` : ''}, not shown]`;
  });
  let text = parts.join('\n');
  if (text === '' && structuredContent) text = JSON.stringify(structuredContent);
  if (text === '' && toolResult !== undefined) text = JSON.stringify(toolResult) ?? '';
  return isError ? { ok: false, error: text || 'The tool reported an error.' } : { ok: true, text };
}
