import { z } from 'zod';
import { approverSchema } from './approval.js';
import { LIMIT_SCOPES, OVER_LIMIT_ACTIONS } from './approval-limits.js';
import { judgementFields } from './policy-judgement.js';

/** The fields a policy file may give a rule (in `defaults`, a tool's entry, or one of its conditional `rules`). */

const DURATION = /^([1-9][0-9]*)(s|m|h|d)$/;
const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** "30m", "24h", "7d" (also "45s") in milliseconds; undefined for anything else. */
export function parseDuration(text: string): number | undefined {
  const match = DURATION.exec(text.trim());
  const unit = match?.[2];
  if (!match || (unit !== 's' && unit !== 'm' && unit !== 'h' && unit !== 'd')) return undefined;
  return Number(match[1]) * UNIT_MS[unit];
}

const duration = z.string().transform((text, ctx) => {
  const ms = parseDuration(text);
  if (ms === undefined) {
    ctx.addIssue({ code: 'custom', message: `"${text}" is not a duration` });
    return z.NEVER;
  }
  return ms;
});

const approver = z.string().superRefine((text, ctx) => {
  if (!approverSchema.safeParse(text).success)
    ctx.addIssue({ code: 'custom', message: `"${text}" is not an approver` });
});

/** `limits`: how many requests may be offered per requester, channel or team in a window (policy.md#limits). */
const limitsField = z
  .array(
    z
      .strictObject({
        per: z.enum(LIMIT_SCOPES, `is not one of ${LIMIT_SCOPES.join(', ')}`),
        max: z.number().int('must be a whole number').min(1, 'must be at least 1'),
        window: duration,
      })
      .transform(({ per, max, window }) => ({ per, max, windowMs: window })),
  )
  .min(1, 'the list is empty');

export const ruleSchema = z.strictObject({
  limits: limitsField.optional(),
  overLimit: z.enum(OVER_LIMIT_ACTIONS, `is not one of ${OVER_LIMIT_ACTIONS.join(', ')}`).optional(),
  requireApproval: z.boolean().optional(),
  approvers: z.array(approver).min(1, 'the list is empty').optional(),
  allowSelfApproval: z.boolean().optional(),
  quorum: z.number().int('must be a whole number').min(1, 'must be at least 1').optional(),
  expiresAfter: duration.nullable().optional(),
  remindAfter: duration.nullable().optional(),
  allowStandingApproval: z.boolean().optional(),
  standingApprovalExpiresAfter: duration.nullable().optional(),
  approvalChannel: z
    .string()
    .regex(/^[CG][A-Z0-9]{2,}$/, 'is not a Slack channel ID')
    .nullable()
    .optional(),
  notify: z
    .array(z.enum(['thread', 'dm'], 'is not a place to announce requests'))
    .min(1, 'the list is empty')
    .optional(),
  escalateAfter: duration.nullable().optional(),
  escalateTo: z.array(approver).min(1, 'the list is empty').optional(),
  /** `false`: no admin may break glass on the tool's requests. */
  breakGlass: z.boolean().optional(),
  /** `"review"`: a clean note of the reviewer (a model) approves the call; null turns a default off. */
  autoApprove: z.literal('review', 'must be "review" or null').nullable().optional(),
  ...judgementFields(),
});
export type FileRule = z.infer<typeof ruleSchema>;

/** One of a tool's conditional rules: a CEL `when` and any rule field, laid over the tool's own fields. */
export const conditionalRuleSchema = ruleSchema.extend({ when: z.string().min(1, 'is empty') });

/** A tool's entry: its rule fields, and conditional `rules` tried in order. */
export const toolSchema = ruleSchema.extend({ rules: z.array(conditionalRuleSchema).optional() });
export type FileTool = z.infer<typeof toolSchema>;

/** A workspace's own `defaults` and `tools`, laid over the file's own for the requests of that workspace. */
export const teamSchema = z.strictObject({
  defaults: ruleSchema.optional(),
  tools: z.record(z.string(), toolSchema).optional(),
});
export type FileTeam = z.infer<typeof teamSchema>;

/**
 * The key of a `teams` entry: a workspace's team ID (`T…`). An organisation's ID (`E…`) is not one: every
 * request belongs to a workspace, even under an organisation-wide install, and rules for the whole
 * organisation are the file's own `defaults` and `tools`.
 */
export function teamKeyProblem(key: string): string | undefined {
  if (/^T[A-Z0-9]{2,}$/.test(key)) return undefined;
  if (/^E[A-Z0-9]{2,}$/.test(key))
    return `"${key}" is an Enterprise Grid organisation ID; name each workspace by its team ID (T…): the file's own defaults and tools already apply to every workspace of the organisation`;
  return `"${key}" is not a Slack team ID; use the workspace's ID, such as T0123ABCD`;
}
