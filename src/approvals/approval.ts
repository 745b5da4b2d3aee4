import { z } from 'zod';
import { approvalLimitSchema, limitReachedSchema, OVER_LIMIT_ACTIONS } from './approval-limits.js';
import type { ApprovalReview } from './approval-review.js';
import { riskSchema } from './risk.js';

export const APPROVAL_STATUSES = [
  'pending',
  'approved',
  'rejected',
  'expired',
  'cancelled',
  'executing',
  'executed',
] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

/** Approvals still to be decided or being carried out: retention leaves their content alone. */
export const OPEN_APPROVAL_STATUSES: readonly ApprovalStatus[] = ['pending', 'executing'];

/** Who may decide a request. */
export const approverSchema = z.union([
  z.literal('requester'),
  z.literal('admins'),
  z.literal('conversation'),
  z.string().regex(/^[UW][A-Z0-9]{2,}$/, 'a Slack user ID such as U012ABCDEF'),
  z.string().regex(/^S[A-Z0-9]{2,}$/, 'a Slack user group ID such as S012ABCDEF'),
]);
export type Approver = z.infer<typeof approverSchema>;

/** Which of a tool's conditional `rules` applied to a request; `error` when its `when` could not be evaluated. */
export const appliedRuleSchema = z.object({
  place: z.string(),
  when: z.string(),
  error: z.string().optional(),
});
export type AppliedRule = z.infer<typeof appliedRuleSchema>;

/** The policy rule that applied to a request; stored with it so later policy changes rewrite nothing. */
export const approvalRuleSchema = z.object({
  approvers: z.array(approverSchema).min(1),
  allowSelfApproval: z.boolean(),
  quorum: z.number().int().min(1),
  allowStandingApproval: z.boolean(),
  expiresAfterMs: z.number().int().positive().nullable(),
  remindAfterMs: z.number().int().positive().nullable(),
  approvalChannel: z.string().nullable(),
  /**
   * How long an "Approve for this thread" given under this rule lasts (null: until revoked). Absent in rules
   * stored before it existed: those get the default.
   */
  standingExpiresAfterMs: z.number().int().positive().nullable().optional(),
  /** Where the request is announced: `thread` (the card in the conversation), `dm` (copies to deciders). */
  notify: z.array(z.enum(['thread', 'dm'])).optional(),
  /** How long a request may wait before `escalateTo` may decide it too (absent or null: never). */
  escalateAfterMs: z.number().int().positive().nullable().optional(),
  /** Who may also decide once the request is escalated, and gets its card by direct message. */
  escalateTo: z.array(approverSchema).min(1).optional(),
  /** When the request was escalated (recorded with its rule by the deadline check). */
  escalatedAt: z.number().int().optional(),
  /** Set when one of the tool's conditional rules applied (absent: the tool's own fields). */
  appliedRule: appliedRuleSchema.optional(),
  /** How many requests may be offered in a window (approval-limits.ts), and what happens past them. */
  limits: z.array(approvalLimitSchema).min(1).optional(),
  overLimit: z.enum(OVER_LIMIT_ACTIONS).optional(),
  /** Set on a request that went past a limit: refused (status `cancelled`), or sent to admins only. */
  limitReached: limitReachedSchema.optional(),
  /** `false`: no admin may break glass on this request (absent: they may, see break-glass.ts). */
  breakGlass: z.boolean().optional(),
  /** `review`: the reviewer (a model) approves the request when its note raises no flag (`reviewerMayApprove`). */
  autoApprove: z.literal('review').optional(),
  /** How risky the policy says the call is (absent: not said, as in rules stored before it existed). */
  risk: riskSchema.optional(),
});
export type ApprovalRule = z.infer<typeof approvalRuleSchema>;

/** How long "Approve for this thread" lasts unless the policy says otherwise. */
export const DEFAULT_STANDING_EXPIRY_MS = 24 * 3_600_000;

/** The life of a standing approval under `rule`; null: until revoked. */
export function standingExpiry(rule: Pick<ApprovalRule, 'standingExpiresAfterMs'>): number | null {
  return rule.standingExpiresAfterMs === undefined ? DEFAULT_STANDING_EXPIRY_MS : rule.standingExpiresAfterMs;
}

/** Announced in the thread (the default), by direct message to those who may decide, or both. */
export function notifiesThread(rule: Pick<ApprovalRule, 'notify'>): boolean {
  return rule.notify?.includes('thread') ?? true;
}

export function notifiesByDm(rule: Pick<ApprovalRule, 'notify'>): boolean {
  return rule.notify?.includes('dm') ?? false;
}

/**
 * What a request offers besides Approve and Reject: standing approvals and edits are one person's decision, so
 * a request that needs several approvals offers neither; a rule may also forbid standing approvals.
 */
export function decisionOptions(rule: Pick<ApprovalRule, 'quorum' | 'allowStandingApproval'>): {
  standing: boolean;
  edit: boolean;
} {
  const single = rule.quorum === 1;
  return { standing: single && rule.allowStandingApproval, edit: single };
}

/** A tool's entry in the policy: whether approval is required (undefined: the tool decides) and the rule. */
export interface ToolPolicy {
  requireApproval: boolean | undefined;
  rule: ApprovalRule;
  /** A logic-less template of the call's effect, shown above its arguments (`{{args.title}}`). */
  preview?: string;
}

/** An approval as the core sees it. */
export interface ApprovalRecord {
  id: string;
  runId: string;
  conversationId: string;
  teamId: string;
  /** The Enterprise Grid organisation of its workspace, when Slack named one (see workspace-reach.ts). */
  enterpriseId?: string | undefined;
  turn: number;
  callId: string;
  toolName: string;
  arguments: string;
  editedArguments: string | null;
  /** What the call would do, in Slack mrkdwn (values escaped), computed before the card; absent when none. */
  preview?: string;
  /** Set when the decision was automatic: the approval whose "Approve for this thread" covered this call. */
  originApprovalId: string | null;
  status: ApprovalStatus;
  requesterId: string;
  rule: ApprovalRule;
  decidedBy: string | null;
  decidedAt: number | null;
  reason: string | null;
  channelId: string;
  threadTs: string;
  messageTs: string | null;
  result: string | null;
  expiresAt: number | null;
  createdAt: number;
  /** Set when an admin approved it by breaking glass (absent for every other decision). */
  breakGlass?: BreakGlassMark | undefined;
  /** The reviewer's note, written by a model before the card was posted (absent: no review ran or it failed). */
  review?: ApprovalReview;
  /**
   * The agents of the agents file the call was made through, outermost first: the innermost asked for it.
   * Absent for a call of the bot's own agent.
   */
  agentChain?: string[];
}

/** "triage → github__create_issue": the tool, named with the agents a nested agent's call went through. */
export function callChain(approval: Pick<ApprovalRecord, 'toolName' | 'agentChain'>): string {
  return [...(approval.agentChain ?? []), approval.toolName].join(' → ');
}

/** The agent that asked for the call: what policy rules see as `agent`. */
export function askingAgent(approval: Pick<ApprovalRecord, 'agentChain'>): string {
  return approval.agentChain?.at(-1) ?? DEFAULT_AGENT;
}

/** A break-glass approval: who overrode the policy, why, and the other admin who acknowledged it afterwards. */
export interface BreakGlassMark {
  by: string;
  justification: string;
  acknowledgedBy: string | null;
  acknowledgedAt: number | null;
}

/** The audit scope of an approval: its team, conversation, run and id. */
export function approvalScope(approval: ApprovalRecord) {
  return {
    teamId: approval.teamId,
    enterpriseId: approval.enterpriseId ?? null,
    conversationId: approval.conversationId,
    runId: approval.runId,
    approvalId: approval.id,
  };
}

/** Longest rejection reason a person can give, in Slack and in the terminal; the model and the card show it in full. */
export const MAX_REASON_LENGTH = 500;

/** The exact output the model reads for a rejected call without a reason. */
/**
 * The bot's own agent, the entry point of every run: what policy rules see as `agent` for its own calls (a
 * call made inside an agent of the agents file names that agent).
 */
export const DEFAULT_AGENT = 'main';

export const REJECTION_TEXT = 'Tool execution was not approved.';

/** The model's view of a rejection: the default sentence, or the decider and their quoted reason. */
export function rejectionOutput(decidedBy: string | null, reason: string | null): string {
  const trimmed = reason?.trim();
  if (!trimmed) return REJECTION_TEXT;
  return `${REJECTION_TEXT} Rejected by <@${decidedBy ?? 'unknown'}>, who said: "${trimmed}"`;
}

/** Why a request expired before its deadline: the app was removed from its workspace (uninstalled, tokens revoked). */
export const APP_REMOVED = 'app_removed';

/** Expiry never reads as a human refusal. */
export function expiryOutput(expiresAfterMs: number | null, reason: string | null = null): string {
  if (reason === APP_REMOVED)
    return 'Tool execution was not approved: the request expired with no decision because the app was removed from this Slack workspace, so nobody could decide it.';
  const after = expiresAfterMs ? ` after ${formatDuration(expiresAfterMs)}` : '';
  return `Tool execution was not approved: the approval request expired${after} with no decision.`;
}

export function formatDuration(ms: number): string {
  const units: [number, string][] = [
    [86_400_000, 'd'],
    [3_600_000, 'h'],
    [60_000, 'm'],
    [1000, 's'],
  ];
  // "24h" reads better than "1d" (and is what policy files say); whole days from two on.
  for (const [size, unit] of units) {
    if (ms % size === 0 && (unit !== 'd' || ms >= 2 * size)) return `${ms / size}${unit}`;
  }
  return `${Math.round(ms / 1000)}s`;
}

/**
 * What an audit event says of the agent that made a call, when it was not the bot's own: the innermost agent
 * (what policy rules see as `agent`) and the chain of agents it was called through, outermost first.
 */
export function agentFields(chain: readonly string[] | undefined): { agent?: string; agentChain?: string[] } {
  const agent = chain?.at(-1);
  return chain && agent ? { agent, agentChain: [...chain] } : {};
}

/** Where a card is shown: a channel and its message ts. */
export interface CardLocation {
  channelId: string;
  messageTs: string;
}

/** The card a click or a form came from, as the payload names it (never trusted over what is stored). */
export interface ClickedCard {
  channelId: string | undefined;
  messageTs: string | undefined;
  threadTs: string | undefined;
}

/**
 * Where to update the card besides the stored location: nowhere when the card's location is stored (a payload
 * naming another message could otherwise overwrite someone else's card); else the clicked message, and only
 * when it is in the approval's own channel and thread (a card posted just before a crash, never recorded).
 */
export function cardFallback(
  approval: Pick<ApprovalRecord, 'messageTs' | 'channelId' | 'threadTs'>,
  clicked: ClickedCard | undefined,
): CardLocation | undefined {
  if (!clicked || approval.messageTs) return undefined;
  const { channelId, messageTs, threadTs } = clicked;
  if (!channelId || !messageTs) return undefined;
  return channelId === approval.channelId && threadTs === approval.threadTs
    ? { channelId, messageTs }
    : undefined;
}
