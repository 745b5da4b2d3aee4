import type { ApprovalRule, ToolPolicy } from './approval.js';
import { BASE_TOOL_POLICY, BUILT_IN_TOOL_POLICIES } from './policy.js';
import type { FileRule, FileTool } from './policy-file-schema.js';
import { layer } from './policy-layers.js';
import { type ConditionalRule, compileWhen } from './policy-rules.js';
import type { PolicyTier } from './policy-summary.js';

/**
 * One level of a policy file: its own `defaults` and `tools` (`prefix` ''), or a workspace's section of it
 * (`prefix` `teams.T0123.`), whose fields win over the file's own for that workspace's requests.
 */
export interface FileLevel {
  prefix: string;
  defaults: FileRule;
  tools: Readonly<Record<string, FileTool>>;
}

/** A tier and, per tool (and `(other tools)`), why nobody could decide its requests, when that is so. */
export interface BuiltTier {
  tier: PolicyTier;
  unreachable: ReadonlyMap<string, string>;
}

const OTHER_TOOLS = '(other tools)';

/**
 * The rules the levels give, the more specific level last (the file's own, then a workspace's). Each tool's
 * entry is its built-in entry, then every level's `defaults`, then every level's entry for the tool: a field
 * of a tool's entry wins over any `defaults`, and a workspace's field over the file's own at the same place.
 * A tool's `rules` are those of the most specific level that sets them, laid over the tool's entry.
 *
 * Adds a problem, with its place, for what does not compile and for rules nobody could satisfy; `inherited`
 * (the file's own tier, when building a workspace's) keeps a problem the file's own rules already have from
 * being told again at every workspace.
 */
export function buildTier(
  file: string,
  knownTools: readonly string[],
  levels: readonly FileLevel[],
  problems: string[],
  inherited?: BuiltTier,
): BuiltTier {
  const unreachable = new Map<string, string>();
  const last = levels[levels.length - 1];
  const defaultsPlace = `${last?.prefix ?? ''}defaults`;
  const report = (key: string, place: string, reason: string | undefined) => {
    if (!reason) return;
    unreachable.set(key, reason);
    if (inherited?.unreachable.get(key) !== reason) problems.push(`${file}: ${place}: ${reason}`);
  };
  const tools: Record<string, ToolPolicy> = {};
  const rules: Record<string, ConditionalRule[]> = {};
  const named = levels.flatMap((level) => Object.keys(level.tools));
  for (const name of new Set([...knownTools, ...named])) {
    const base = BUILT_IN_TOOL_POLICIES[name] ?? BASE_TOOL_POLICY;
    const withDefaults = levels.reduce((below, level) => layer(below, level.defaults), base);
    const entry = levels.reduce((below, level) => layer(below, level.tools[name] ?? {}), withDefaults);
    tools[name] = entry;
    const owner = levels.findLast((level) => level.tools[name] !== undefined);
    if (entry.requireApproval !== false)
      report(name, owner ? `${owner.prefix}tools.${name}` : defaultsPlace, unreachableReason(entry.rule));
    const ruling = levels.findLast((level) => level.tools[name]?.rules !== undefined);
    const compiled = ruling
      ? compileRules(file, `${ruling.prefix}tools.${name}`, entry, ruling.tools[name]?.rules ?? [], problems)
      : [];
    if (compiled.length > 0) rules[name] = compiled;
  }
  const defaults = levels.reduce((below, level) => layer(below, level.defaults), BASE_TOOL_POLICY);
  report(OTHER_TOOLS, defaultsPlace, unreachableReason(defaults.rule));
  return { tier: { defaults, tools, rules }, unreachable };
}

/**
 * A tool's conditional rules, each laid over the tool's entry and its `when` compiled. Adds a problem, with its
 * place, for an expression that does not compile or names an unknown variable, and for a rule nobody could
 * satisfy (a `when` that cannot be evaluated fails closed, so even a rule that waives approval needs deciders).
 */
function compileRules(
  file: string,
  toolPlace: string,
  entry: ToolPolicy,
  rules: readonly (FileRule & { when: string })[],
  problems: string[],
): ConditionalRule[] {
  const compiled: ConditionalRule[] = [];
  rules.forEach(({ when, ...fields }, index) => {
    const place = `${toolPlace}.rules[${index}]`;
    const policy = layer(entry, fields);
    const unreachable = unreachableReason(policy.rule);
    if (unreachable) problems.push(`${file}: ${place}: ${unreachable}`);
    const expression = compileWhen(when);
    if (!expression.ok) {
      problems.push(
        `${file}: ${place}.when: ${expression.message}; write a CEL expression over args, tool, requester, channel, team and agent that gives true or false, such as "args.channel == 'C0SANDBOX'"`,
      );
      return;
    }
    compiled.push({ place, when, test: expression.test, policy });
  });
  return compiled;
}

/** A rule nobody could ever satisfy is a configuration error, not a request that waits forever. */
function unreachableReason(rule: ApprovalRule): string | undefined {
  if (
    rule.notify &&
    !rule.notify.includes('thread') &&
    rule.approvers.every((a) => a === 'conversation' || a === 'requester')
  )
    return 'notify is only "dm" but the approvers name nobody to send it to; add "thread" to notify or name admins, users or user groups';
  if (rule.escalateAfterMs && !rule.escalateTo)
    return 'escalateAfter is set but escalateTo is not; add escalateTo (users, user groups or "admins") or set escalateAfter to null';
  const open = rule.approvers.some((a) => a === 'admins' || a === 'conversation' || a.startsWith('S'));
  if (open) return undefined;
  const people = new Set(rule.approvers.filter((a) => a !== 'requester' || rule.allowSelfApproval));
  if (people.size === 0)
    return 'nobody can decide: the only approver is the requester and allowSelfApproval is false; add approvers or allow self-approval';
  if (people.size < rule.quorum)
    return `quorum ${rule.quorum} cannot be reached by ${people.size} listed approver(s); lower quorum or add approvers`;
  return undefined;
}
