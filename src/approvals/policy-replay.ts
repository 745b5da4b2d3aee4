import { type ApprovalRule, DEFAULT_AGENT } from './approval.js';
import { type ApprovalPolicy, decidingRule, mayDecide } from './policy.js';

/** One approval request as the audit log and the approvals table remember it. */
export interface PastRequest {
  approvalId: string;
  at: number;
  teamId: string;
  tool: string;
  requesterId: string;
  channelId: string;
  /** The call's arguments (parsed JSON), as the request recorded them. */
  args: unknown;
  /** The agent that made the call (`main` for the bot's own, and for requests older than agents). */
  agent?: string;
  /** The rule that applied then, when known. */
  rule: ApprovalRule | undefined;
  status: string;
  /** Everyone who voted, with the person they voted for when through a delegation. */
  votes: { userId: string; vote: 'approve' | 'reject'; onBehalfOf?: string }[];
}

/** Whether a person who voted would still have been allowed under the new policy. */
export type StillAllowed = 'yes' | 'no' | 'unknown';

/** What the new policy would have made of one past request. */
export interface ReplayedRequest {
  approvalId: string;
  at: number;
  /** The request's workspace, whose rules it is replayed against (its section of the file, if any). */
  teamId: string;
  tool: string;
  requesterId: string;
  status: string;
  before: { required: true; approvers: string | null; quorum: number | null; rule: string | null };
  after: {
    required: boolean;
    approvers: string;
    quorum: number;
    /** The conditional rule that matched (`tools.x.rules[1]`), null for the tool's own fields. */
    rule: string | null;
    /** Set when the matched rule's `when` could not be evaluated (it then fails closed). */
    error?: string;
  };
  deciders: { userId: string; vote: 'approve' | 'reject'; stillAllowed: StillAllowed }[];
  /** What differs, in words; empty when the new policy would have done the same. */
  differences: string[];
}

/**
 * Replays one past request against `policy`, under the rules of its own workspace: whether it would need approval, who could decide and how many,
 * which rule would match, and whether each person who voted would still have been allowed. Group membership
 * is not known offline, so a vote only a user group could allow is `unknown`; clicks are taken to come from
 * the conversation's channel. Pure.
 */
export function replayRequest(
  policy: ApprovalPolicy,
  past: PastRequest,
  adminUserIds: readonly string[],
): ReplayedRequest {
  const next = policy.forCall({
    args: past.args,
    tool: past.tool,
    requester: past.requesterId,
    channel: past.channelId,
    team: past.teamId,
    agent: past.agent ?? DEFAULT_AGENT,
  });
  // "When the tool asks": it asked, since the request exists.
  const required = next.requireApproval ?? true;
  const rule = decidingRule(next.rule);
  const deciders = past.votes.map((vote) => {
    // Through a delegation, what counts is whether the delegator would still have been allowed.
    const who = vote.onBehalfOf ?? vote.userId;
    const decider = { userId: who, isAdmin: adminUserIds.includes(who), inConversation: true };
    const allowed = mayDecide(rule, past.requesterId, decider).ok;
    const viaGroup = rule.approvers.some((a) => a.startsWith('S')) && who !== past.requesterId;
    const stillAllowed: StillAllowed = allowed ? 'yes' : viaGroup ? 'unknown' : 'no';
    return { userId: vote.userId, vote: vote.vote, stillAllowed };
  });
  const before = {
    required: true as const,
    approvers: past.rule ? describe(past.rule) : null,
    quorum: past.rule?.quorum ?? null,
    rule: past.rule?.appliedRule?.place ?? null,
  };
  const after = {
    required,
    approvers: describe(rule),
    quorum: rule.quorum,
    rule: next.rule.appliedRule?.place ?? null,
    ...(next.rule.appliedRule?.error ? { error: next.rule.appliedRule.error } : {}),
  };
  const differences: string[] = [];
  if (!required) differences.push('would not need approval');
  else {
    if (before.approvers !== null && before.approvers !== after.approvers)
      differences.push(`deciders ${before.approvers} → ${after.approvers}`);
    if (before.quorum !== null && before.quorum !== after.quorum)
      differences.push(`quorum ${before.quorum} → ${after.quorum}`);
    for (const decider of deciders)
      if (decider.stillAllowed === 'no') differences.push(`${decider.userId} would not be allowed to decide`);
  }
  if (before.rule !== after.rule) differences.push(`rule ${before.rule ?? 'tool'} → ${after.rule ?? 'tool'}`);
  return {
    approvalId: past.approvalId,
    at: past.at,
    teamId: past.teamId,
    tool: past.tool,
    requesterId: past.requesterId,
    status: past.status,
    before,
    after,
    deciders,
    differences,
  };
}

function describe(rule: Pick<ApprovalRule, 'approvers'>): string {
  return rule.approvers.join(' or ');
}

/** The requests the new policy would have decided differently, in the order they were replayed. */
export function changedDecisions(replayed: readonly ReplayedRequest[]): ReplayedRequest[] {
  return replayed.filter((r) => r.differences.length > 0);
}

/** Per tool: requests, how many would need approval, and how many would differ. */
export interface ReplaySummaryRow {
  tool: string;
  requests: number;
  stillNeedApproval: number;
  noApproval: number;
  deciderRefused: number;
  differ: number;
}

export function summarizeReplay(replayed: readonly ReplayedRequest[]): ReplaySummaryRow[] {
  const rows = new Map<string, ReplaySummaryRow>();
  for (const r of replayed) {
    const row = rows.get(r.tool) ?? {
      tool: r.tool,
      requests: 0,
      stillNeedApproval: 0,
      noApproval: 0,
      deciderRefused: 0,
      differ: 0,
    };
    row.requests += 1;
    if (r.after.required) row.stillNeedApproval += 1;
    else row.noApproval += 1;
    if (r.after.required && r.deciders.some((d) => d.stillAllowed === 'no')) row.deciderRefused += 1;
    if (r.differences.length > 0) row.differ += 1;
    rows.set(r.tool, row);
  }
  return [...rows.values()].sort((a, b) => a.tool.localeCompare(b.tool));
}
