import { z } from 'zod';

/**
 * Limits on how many requests of a tool (or of one of its conditional rules) are offered for approval in a
 * sliding window, per requester, channel or team. What counts: every request offered (a pending card, or a call
 * an "Approve for this thread" grant covers), whatever its outcome later; a request refused by a limit, or sent
 * to admins because of one, does not count. The stores count and lock; the rule is here, pure.
 */
export const LIMIT_SCOPES = ['requester', 'channel', 'team'] as const;
export type LimitScope = (typeof LIMIT_SCOPES)[number];

export const approvalLimitSchema = z.object({
  per: z.enum(LIMIT_SCOPES),
  max: z.number().int().min(1),
  windowMs: z.number().int().positive(),
});
export type ApprovalLimit = z.infer<typeof approvalLimitSchema>;

/** What happens to a request over a limit: refused (the model and the thread are told), or sent to admins only. */
export const OVER_LIMIT_ACTIONS = ['refuse', 'admins'] as const;
export type OverLimit = (typeof OVER_LIMIT_ACTIONS)[number];

/** The limit a request reached, stored with its rule: how many were offered in the window, when a slot frees. */
export const limitReachedSchema = approvalLimitSchema.extend({
  count: z.number().int().min(0),
  resetsAt: z.number().int(),
});
export type LimitReached = z.infer<typeof limitReachedSchema>;

/** Who made a call, and where: the values a limit's `per` picks from. */
export interface LimitFacts {
  teamId: string;
  tool: string;
  /** The conditional rule that applied (`tools.x.rules[0]`), or undefined for the tool's own fields. */
  place: string | undefined;
  requesterId: string;
  channelId: string;
}

/** One limit to check, and the key of the requests it counts (one team, one tool or rule, one scope value). */
export interface LimitCheck {
  key: string;
  limit: ApprovalLimit;
}

/** The checks a request must pass under its rule; none when the rule sets no limits. */
export function limitChecks(
  rule: { limits?: readonly ApprovalLimit[] | undefined },
  facts: LimitFacts,
): LimitCheck[] {
  return (rule.limits ?? []).map((limit) => ({ key: limitKey(limit.per, facts), limit }));
}

function limitKey(per: LimitScope, facts: LimitFacts): string {
  const value = per === 'requester' ? facts.requesterId : per === 'channel' ? facts.channelId : facts.teamId;
  return [facts.teamId, facts.tool, facts.place ?? 'tool', `${per}:${value}`].join('|');
}

export type LimitVerdict = { over: false } | { over: true; reached: LimitReached };

/**
 * Whether one more request would go past a limit, given the times of the requests counted under each key
 * (any order, older ones included). Over a limit when `max` requests were counted in its window ending now;
 * it resets when the oldest of the last `max` leaves the window. Of several limits passed, the one that
 * resets last is reported (the request could be offered only then).
 */
export function judgeLimits(
  checks: readonly LimitCheck[],
  uses: ReadonlyMap<string, readonly number[]>,
  now: number,
): LimitVerdict {
  let worst: LimitReached | undefined;
  for (const { key, limit } of checks) {
    const inWindow = (uses.get(key) ?? []).filter((at) => at > now - limit.windowMs).sort((a, b) => a - b);
    if (inWindow.length < limit.max) continue;
    const oldestKept = inWindow[inWindow.length - limit.max] ?? now;
    const reached = { ...limit, count: inWindow.length, resetsAt: oldestKept + limit.windowMs };
    if (!worst || reached.resetsAt > worst.resetsAt) worst = reached;
  }
  return worst ? { over: true, reached: worst } : { over: false };
}

/** The longest window among `checks`: older uses need not be read. */
export function longestWindow(checks: readonly LimitCheck[]): number {
  return Math.max(0, ...checks.map((check) => check.limit.windowMs));
}
