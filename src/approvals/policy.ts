import { type ApprovalRule, type Approver, DEFAULT_STANDING_EXPIRY_MS, type ToolPolicy } from './approval.js';
import { type CallFacts, type ConditionalRule, resolveCall } from './policy-rules.js';
import { type PolicyDescription, type PolicyTier, summarizePolicy } from './policy-summary.js';

export interface ApprovalPolicy {
  /**
   * The rule for a tool, in the workspace `teamId` (its section of the file laid over the file's own rules);
   * without a team, the file's own. Tools without their own entry get the defaults.
   */
  forTool(toolName: string, teamId?: string): ToolPolicy;
  /**
   * The rule for one call: the tool's in the call's workspace (`facts.team`), with the first of its
   * conditional rules that matches laid over it.
   */
  forCall(facts: CallFacts): ToolPolicy;
  /** One line for people: where the policy comes from and what each tool needs (printed at start-up). */
  readonly summary: string;
  /** Messages that `post_message` sends may show link previews (off unless the policy file opts in). */
  readonly postMessageLinkPreviews: boolean;
  /**
   * Every approver any rule names (including `escalateTo`), for who may delegate deciding: the rules of the
   * workspace `teamId`, or of every workspace without one.
   */
  namedApprovers(teamId?: string): readonly Approver[];
  /**
   * What the policy is made of (its source, defaults, each tool's entry and conditional rules), for a table:
   * the rules of the workspace `teamId` (with `team` set when the file has a section for it), else the file's own.
   */
  describe(teamId?: string): PolicyDescription;
}

const BASE_RULE: ApprovalRule = {
  approvers: ['conversation', 'admins'],
  allowSelfApproval: true,
  quorum: 1,
  allowStandingApproval: true,
  expiresAfterMs: null,
  remindAfterMs: null,
  approvalChannel: null,
  standingExpiresAfterMs: DEFAULT_STANDING_EXPIRY_MS,
};

const ADMINS_ONLY: ApprovalRule = {
  ...BASE_RULE,
  approvers: ['admins'],
  allowSelfApproval: false,
  allowStandingApproval: false,
};

/**
 * Who may approve the built-in tools by default; a policy file's rules are laid over these. A tool without an
 * entry here gets `BASE_TOOL_POLICY` (its own `needsApproval`, decided by the conversation or admins).
 */
export const BUILT_IN_TOOL_POLICIES: Readonly<Record<string, ToolPolicy>> = {
  get_current_time: { requireApproval: false, rule: BASE_RULE },
  list_notes: { requireApproval: false, rule: BASE_RULE },
  create_note: { requireApproval: true, rule: BASE_RULE },
  delete_note: { requireApproval: true, rule: ADMINS_ONLY },
  post_message: { requireApproval: true, rule: ADMINS_ONLY },
};

/** What a tool without an entry of its own gets (tools added at run time, such as MCP tools). */
export const BASE_TOOL_POLICY: ToolPolicy = { requireApproval: undefined, rule: BASE_RULE };

/** The built-in defaults (docs/policy.md), used when no policy file is given. */
export function builtInPolicy(): ApprovalPolicy {
  return createPolicy(BASE_TOOL_POLICY, BUILT_IN_TOOL_POLICIES, 'built-in defaults');
}

export function createPolicy(
  defaults: ToolPolicy,
  tools: Readonly<Record<string, ToolPolicy>>,
  source = 'custom policy',
  rules: Readonly<Record<string, readonly ConditionalRule[]>> = {},
  options: { postMessageLinkPreviews?: boolean; teams?: Readonly<Record<string, PolicyTier>> } = {},
): ApprovalPolicy {
  const own: PolicyTier = { defaults, tools, rules };
  const teams = options.teams ?? {};
  const tierOf = (teamId: string | undefined): PolicyTier =>
    (teamId !== undefined && Object.hasOwn(teams, teamId) ? teams[teamId] : undefined) ?? own;
  const forTool = (toolName: string, teamId?: string) => {
    const tier = tierOf(teamId);
    return tier.tools[toolName] ?? tier.defaults;
  };
  const ownNamed = namedIn([own]);
  const allNamed = namedIn([own, ...Object.values(teams)]);
  return {
    forTool,
    namedApprovers: (teamId) =>
      teamId === undefined ? allNamed : tierOf(teamId) === own ? ownNamed : namedIn([tierOf(teamId)]),
    forCall: (facts) =>
      resolveCall(forTool(facts.tool, facts.team), tierOf(facts.team).rules[facts.tool] ?? [], facts),
    summary: summarizePolicy(source, defaults, tools, rules, teams),
    describe: (teamId) => {
      const tier = tierOf(teamId);
      return { source, ...tier, ...(tier === own || teamId === undefined ? {} : { team: teamId }) };
    },
    postMessageLinkPreviews: options.postMessageLinkPreviews ?? false,
  };
}

/** Every approver the tiers' rules name where approval may be asked (including `escalateTo`). */
function namedIn(tiers: readonly PolicyTier[]): Approver[] {
  const entries = tiers.flatMap((tier) => [
    tier.defaults,
    ...Object.values(tier.tools),
    ...Object.values(tier.rules).flatMap((r) => r.map((c) => c.policy)),
  ]);
  return [
    ...new Set(
      entries
        .filter((entry) => entry.requireApproval !== false)
        .flatMap((entry) => [...entry.rule.approvers, ...(entry.rule.escalateTo ?? [])]),
    ),
  ];
}

export interface Decider {
  userId: string;
  isAdmin: boolean;
  /** The click came from the conversation's own channel. */
  inConversation: boolean;
  /** Members of the user groups named in the rule, when the rule names any. */
  groupMembers?: ReadonlyMap<string, ReadonlySet<string>>;
}

export type DecisionPermission =
  | { ok: true }
  | { ok: false; reason: 'self_approval' | 'not_an_approver'; approvers: string };

/** The rule people are checked against: once escalated, `escalateTo` may decide too. */
export function decidingRule(rule: ApprovalRule): ApprovalRule {
  if (rule.escalatedAt === undefined || !rule.escalateTo) return rule;
  return { ...rule, approvers: [...new Set([...rule.approvers, ...rule.escalateTo])] };
}

/** Whether this person may decide a request made by `requesterId` under `rule`. Pure. */
export function mayDecide(rule: ApprovalRule, requesterId: string, decider: Decider): DecisionPermission {
  const approvers = describeApprovers(rule);
  if (decider.userId === requesterId && !rule.allowSelfApproval) {
    return { ok: false, reason: 'self_approval', approvers };
  }
  const allowed = rule.approvers.some((approver) => approverMatches(approver, requesterId, decider));
  return allowed ? { ok: true } : { ok: false, reason: 'not_an_approver', approvers };
}

/** Whether one entry of a rule's `approvers` names this person, for a request made by `requesterId`. Pure. */
export function approverMatches(approver: Approver, requesterId: string, decider: Decider): boolean {
  if (approver === 'admins') return decider.isAdmin;
  if (approver === 'conversation') return decider.inConversation;
  if (approver === 'requester') return decider.userId === requesterId;
  if (approver.startsWith('S')) return decider.groupMembers?.get(approver)?.has(decider.userId) ?? false;
  return approver === decider.userId;
}

/** "admins", "anyone in the conversation", "<@U1>", "<!subteam^S1>", joined for people to read. */
export function describeApprovers(rule: Pick<ApprovalRule, 'approvers'>): string {
  const words = rule.approvers.map((approver) => {
    if (approver === 'admins') return 'admins';
    if (approver === 'conversation') return 'anyone in the conversation';
    if (approver === 'requester') return 'the requester';
    return approver.startsWith('S') ? `<!subteam^${approver}>` : `<@${approver}>`;
  });
  return words.join(' or ');
}

/**
 * The policy in force, replaced as a whole when the file is loaded again (`SIGHUP`): each call is checked
 * against the policy of the moment it is planned, and requests already waiting keep the rule stored with them.
 */
export class ReloadablePolicy implements ApprovalPolicy {
  #current: ApprovalPolicy;

  constructor(initial: ApprovalPolicy) {
    this.#current = initial;
  }

  forTool(toolName: string, teamId?: string): ToolPolicy {
    return this.#current.forTool(toolName, teamId);
  }

  forCall(facts: CallFacts): ToolPolicy {
    return this.#current.forCall(facts);
  }

  get summary(): string {
    return this.#current.summary;
  }

  namedApprovers(teamId?: string): readonly Approver[] {
    return this.#current.namedApprovers(teamId);
  }

  describe(teamId?: string): PolicyDescription {
    return this.#current.describe(teamId);
  }

  get postMessageLinkPreviews(): boolean {
    return this.#current.postMessageLinkPreviews;
  }

  replace(next: ApprovalPolicy): void {
    this.#current = next;
  }
}
