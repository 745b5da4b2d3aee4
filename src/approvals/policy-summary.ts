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
