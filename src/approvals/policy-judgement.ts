import { z } from 'zod';
import type { ApprovalRule, ToolPolicy } from './approval.js';
import { previewTemplateProblem } from './preview-template.js';
import { riskSchema } from './risk.js';

/**
 * The policy file's fields that help a person judge a request: `risk` (a label on the card, App Home's order)
 * and `preview` (a template of what the call would do). Allowed in `defaults`, a tool's entry and its rules.
 */
export function judgementFields() {
  return {
    risk: z.enum(riskSchema.options, 'is not a risk').optional(),
    preview: z
      .string()
      .min(1, 'is empty')
      .superRefine((text, ctx) => {
        const problem = previewTemplateProblem(text);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
  };
}

type JudgementFields = { risk?: ApprovalRule['risk']; preview?: string | undefined };

/** `risk` is stored in the rule, and left out of rules that never set it (they read as they always did). */
export function riskLayer(base: ApprovalRule, over: JudgementFields): Pick<ApprovalRule, 'risk'> {
  const risk = over.risk ?? base.risk;
  return risk ? { risk } : {};
}

/** The preview template the more specific layer names, else the one below it. */
export function previewLayer(base: ToolPolicy, over: JudgementFields): Pick<ToolPolicy, 'preview'> {
  const preview = over.preview ?? base.preview;
  return preview ? { preview } : {};
}
