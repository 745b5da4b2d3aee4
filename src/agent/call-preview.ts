import type { CallFacts } from '../approvals/policy-rules.js';
import { renderPreviewTemplate } from '../approvals/preview-template.js';
import type { Logger } from '../logger.js';
import { trimPreview } from '../preview-text.js';
import type { AgentTool, ParsedArguments, ToolContext } from './tool.js';

/** How long a preview may take before the card is posted without it. */
export const PREVIEW_TIMEOUT_MS = 2000;

export interface PreviewRequest {
  tool: AgentTool;
  /** The policy's template for the call, when it names one: it wins over the tool's own preview. */
  template: string | undefined;
  parsed: ParsedArguments;
  facts: CallFacts;
  context: ToolContext;
}

/**
 * A call's preview: the policy's template, else the tool's own (only for arguments that parsed). Never
 * throws and never waits longer than `timeoutMs`: a preview that fails or is slow is left out (and logged),
 * so the card is never held back by it.
 */
export async function previewCall(
  request: PreviewRequest,
  options: { timeoutMs?: number; logger?: Logger } = {},
): Promise<string | undefined> {
  const { tool, template, parsed, facts, context } = request;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<'late'>((resolve) => {
    timer = setTimeout(() => resolve('late'), options.timeoutMs ?? PREVIEW_TIMEOUT_MS);
  });
  const compute = async (): Promise<string | undefined> => {
    if (template !== undefined) return renderPreviewTemplate(template, facts);
    if (!tool.preview || !parsed.ok) return undefined;
    const text = await tool.preview(parsed.args, context);
    return text === undefined ? undefined : trimPreview(text);
  };
  try {
    const outcome = await Promise.race([compute(), late]);
    if (outcome !== 'late') return outcome;
    options.logger?.warn('preview left out: it took too long', { tool: tool.name, runId: context.runId });
    return undefined;
  } catch (error) {
    options.logger?.warn('preview left out: it failed', {
      tool: tool.name,
      runId: context.runId,
      error: error instanceof Error ? error.message : String(error),
    });
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
