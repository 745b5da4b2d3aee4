import { formatDuration, type ToolPolicy } from './approval.js';
import type { ConditionalRule } from './policy-rules.js';

/**
 * The active policy in one line, for the start-up output and the `policy.loaded` audit event; then one line per
 * workspace with a section of its own in the file, naming only what differs there.
 *
 * @example
 * summarizePolicy('policy.json', defaults, { delete_note: ... })
 * // 'Approval policy (policy.json): delete_note: admins, 2 approvals, no self-approval, expires after 24h; other tools: ...'
 */
export function summarizePolicy(
  source: string,
  defaults: ToolPolicy,
  tools: Readonly<Record<string, ToolPolicy>>,
  rules: Readonly<Record<string, readonly ConditionalRule[]>> = {},
  teams: Readonly<Record<string, PolicyTier>> = {},
): string {
  const own: PolicyTier = { defaults, tools, rules };
  const parts = Object.keys(tools)
    .sort()
    .map((name) => toolPart(name, own));
  parts.push(`other tools: ${describeEntry(defaults)}`);
  const teamLines = Object.keys(teams)
    .sort()
    .map((team) => {
      const tier = teams[team] ?? own;
      const differing = Object.keys(tier.tools)
        .sort()
        .filter((name) => fingerprint(name, tier) !== fingerprint(name, own))
        .map((name) => toolPart(name, tier));
      if (fingerprint(undefined, tier) !== fingerprint(undefined, own))
        differing.push(`other tools: ${describeEntry(tier.defaults)}`);
      return `Team ${team}: ${differing.length > 0 ? differing.join('; ') : "the file's own rules, unchanged"}`;
    });
  return [`Approval policy (${source}): ${parts.join('; ')}`, ...teamLines].join('\n');
}

/** `delete_note: admins, 2 approvals (rules[0] when …: …)`, as the summary line names a tool. */
function toolPart(name: string, tier: PolicyTier): string {
  const entry = tier.tools[name];
  const conditional = (tier.rules[name] ?? []).map(
    (rule, index) => ` (rules[${index}] when ${rule.when}: ${describeEntry(rule.policy)})`,
  );
  return `${name}: ${entry ? describeEntry(entry) : 'tool default'}${conditional.join('')}`;
}

/**
 * All that a tool's treatment is made of (its entry and conditional rules), to tell whether two tiers differ.
 * The rule of an entry that needs no approval is never asked (only its conditional rules may be).
 */
function fingerprint(name: string | undefined, tier: PolicyTier): string {
  if (name === undefined) return JSON.stringify(tier.defaults);
  const entry = tier.tools[name] ?? tier.defaults;
  const rules = (tier.rules[name] ?? []).map(({ when, policy }) => ({ when, policy }));
  return JSON.stringify({ entry: entry.requireApproval === false ? 'no approval' : entry, rules });
}

/** The rules of one level of the policy: the file's own, or a workspace's (the file's own with its section laid over). */
export interface PolicyTier {
  /** What a tool without an entry of its own gets. */
  defaults: ToolPolicy;
  tools: Readonly<Record<string, ToolPolicy>>;
  rules: Readonly<Record<string, readonly ConditionalRule[]>>;
}

/** What a policy is made of, as it was built: for a table of it (the console's policy page). */
export interface PolicyDescription extends PolicyTier {
  source: string;
  /** The workspace whose section of the file these rules come from; absent for the file's own rules. */
  team?: string;
}

/** One tool's line of the policy table; `(other tools)` for the defaults. Durations as the policy file writes them. */
export interface PolicyTableRow {
  tool: string;
  approval: 'required' | 'not required' | 'when the tool asks';
  approvers: string[];
  quorum: number;
  selfApproval: boolean;
  standingApproval: boolean;
  expiresAfter: string | null;
  remindAfter: string | null;
  /** `2h → U1 or admins` */
  escalation: string | null;
  /** The tool's conditional rules, in the order they are tried, each described as the summary line does. */
  rules: { place: string; when: string; effect: string }[];
}

/** The policy as a table, one row per tool (sorted) and the defaults last: the same words as the summary line. */
export function policyTable(policy: PolicyDescription): PolicyTableRow[] {
  const row = (tool: string, { requireApproval, rule }: ToolPolicy): PolicyTableRow => ({
    tool,
    approval:
      requireApproval === undefined ? 'when the tool asks' : requireApproval ? 'required' : 'not required',
    approvers: [...rule.approvers],
    quorum: rule.quorum,
    selfApproval: rule.allowSelfApproval,
    standingApproval: rule.allowStandingApproval,
    expiresAfter: rule.expiresAfterMs ? formatDuration(rule.expiresAfterMs) : null,
    remindAfter: rule.remindAfterMs ? formatDuration(rule.remindAfterMs) : null,
    escalation:
      rule.escalateAfterMs && rule.escalateTo
        ? `${formatDuration(rule.escalateAfterMs)} → ${rule.escalateTo.join(' or ')}`
        : null,
    rules: (policy.rules[tool] ?? []).map((r) => ({
      place: r.place,
      when: r.when,
      effect: describeEntry(r.policy),
    })),
  });
  return [
    ...Object.keys(policy.tools)
      .sort()
      .map((name) => row(name, policy.tools[name] ?? policy.defaults)),
    row('(other tools)', policy.defaults),
  ];
}

function describeEntry({ requireApproval, rule }: ToolPolicy): string {
  if (requireApproval === false) return 'no approval';
  const words = [rule.approvers.join(' or ')];
  if (rule.quorum > 1) words.push(`${rule.quorum} approvals`);
  if (!rule.allowSelfApproval) words.push('no self-approval');
  if (!rule.allowStandingApproval) words.push('no standing approval');
  if (rule.expiresAfterMs) words.push(`expires after ${formatDuration(rule.expiresAfterMs)}`);
  if (rule.remindAfterMs) words.push(`reminder every ${formatDuration(rule.remindAfterMs)}`);
  if (rule.approvalChannel) words.push(`also in ${rule.approvalChannel}`);
  if (rule.notify) words.push(`announced by ${rule.notify.join(' and ')}`);
  if (rule.escalateAfterMs && rule.escalateTo)
    words.push(`escalated to ${rule.escalateTo.join(' or ')} after ${formatDuration(rule.escalateAfterMs)}`);
  const described = words.join(', ');
  return requireApproval === undefined ? `when the tool asks, ${described}` : described;
}
