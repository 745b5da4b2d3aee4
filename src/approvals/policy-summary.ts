import { formatDuration, type ToolPolicy } from './approval.js';
import type { ConditionalRule } from './policy-rules.js';

/**
 * The active policy in one line, for the start-up output and the `policy.loaded` audit event.
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
): string {
  const parts = Object.keys(tools)
    .sort()
    .map((name) => {
      const entry = tools[name];
      const conditional = (rules[name] ?? []).map(
        (rule, index) => ` (rules[${index}] when ${rule.when}: ${describeEntry(rule.policy)})`,
      );
      return `${name}: ${entry ? describeEntry(entry) : 'tool default'}${conditional.join('')}`;
    });
  parts.push(`other tools: ${describeEntry(defaults)}`);
  return `Approval policy (${source}): ${parts.join('; ')}`;
}

/** What a policy is made of, as it was built: for a table of it (the console's policy page). */
export interface PolicyDescription {
  source: string;
  /** What a tool without an entry of its own gets. */
  defaults: ToolPolicy;
  tools: Readonly<Record<string, ToolPolicy>>;
  rules: Readonly<Record<string, readonly ConditionalRule[]>>;
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
