import { readFileSync } from 'node:fs';
import { z } from 'zod';
import type { ApprovalRule, ToolPolicy } from './approval.js';
import {
  type ApprovalPolicy,
  BASE_TOOL_POLICY,
  BUILT_IN_TOOL_POLICIES,
  builtInPolicy,
  createPolicy,
} from './policy.js';
import { type FileRule, type FileTool, ruleSchema, toolSchema } from './policy-file-schema.js';
import { layer } from './policy-layers.js';
import { policyProblem } from './policy-problems.js';
import { type ConditionalRule, compileWhen } from './policy-rules.js';

export type PolicyLoadResult = { ok: true; policy: ApprovalPolicy } | { ok: false; problems: string[] };

const fileSchema = z.strictObject({
  /** Let Slack show link previews on messages that `post_message` sends (off by default). */
  postMessageLinkPreviews: z.boolean().optional(),
  defaults: ruleSchema.optional(),
  tools: z.record(z.string(), toolSchema).optional(),
});

/** Just the tool names, so unknown ones are reported together with every other problem. */
const toolsObject = z.object({ tools: z.record(z.string(), z.unknown()) });

/** MCP tools are added at run time and named `SERVER__TOOL`; they may have rules before they exist. */
const MCP_TOOL = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*__[A-Za-z0-9_-]+$/;

/**
 * The active policy: the built-in defaults when no file is configured, else the file's rules laid over them
 * (built-in entry of the tool, then the file's `defaults`, then the file's entry for the tool). `knownTools`
 * are the names of the tools the runner gets (`toolNames()` of src/tools/built-in-tools.ts); a rule for any
 * other name is a mistake, except for MCP tools (`SERVER__TOOL`), which appear at run time.
 */
export function loadApprovalPolicy(
  file: string | undefined,
  knownTools: readonly string[],
): PolicyLoadResult {
  if (file === undefined) return { ok: true, policy: builtInPolicy() };
  const read = readPolicyFile(file);
  return read.ok ? parsePolicyText(read.text, file, knownTools) : read;
}

/** Where the file's name came from, as the problem of an unreadable file says: the bot's setting by default. */
export const POLICY_FILE_SETTING_FIX = 'check APPROVAL_POLICY_FILE or unset it';

/**
 * The text of a policy file, or the one problem that it cannot be read. `fix` says where its name came from
 * (the setting, or a command line argument), so the message points at what to correct.
 */
export function readPolicyFile(
  file: string,
  fix = POLICY_FILE_SETTING_FIX,
): { ok: true; text: string } | { ok: false; problems: string[] } {
  try {
    return { ok: true, text: readFileSync(file, 'utf8') };
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'unreadable';
    return {
      ok: false,
      problems: [`${file}: cannot read the file (${code}); ${fix}`],
    };
  }
}

/** Validates a policy file's text. Every problem names the file, the JSON path, what is wrong and the fix. */
export function parsePolicyText(text: string, file: string, knownTools: readonly string[]): PolicyLoadResult {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    const detail = error instanceof Error ? error.message : 'syntax error';
    return { ok: false, problems: [`${file}: not valid JSON (${detail}); fix the syntax`] };
  }
  const toolNames = toolsObject.safeParse(json);
  const problems = (toolNames.success ? Object.keys(toolNames.data.tools) : [])
    .filter((name) => !knownTools.includes(name) && !MCP_TOOL.test(name))
    .map(
      (name) =>
        `${file}: tools.${name}: unknown tool "${name}"; use one of ${knownTools.join(', ')}, or SERVER__TOOL for an MCP tool`,
    );
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) problems.push(...parsed.error.issues.map((i) => policyProblem(file, i)));
  // Rules nobody can satisfy are found on the valid parts too, so one run lists every problem.
  const { defaults = {}, tools = {} } = parsed.success ? parsed.data : salvage(json);
  const postMessageLinkPreviews = parsed.success ? (parsed.data.postMessageLinkPreviews ?? false) : false;
  const entries: Record<string, ToolPolicy> = {};
  const conditional: Record<string, ConditionalRule[]> = {};
  for (const name of new Set([...knownTools, ...Object.keys(tools)])) {
    const base = BUILT_IN_TOOL_POLICIES[name] ?? BASE_TOOL_POLICY;
    entries[name] = layer(layer(base, defaults), tools[name] ?? {});
    const unreachable = unreachableReason(entries[name].rule);
    if (unreachable && entries[name].requireApproval !== false)
      problems.push(`${file}: ${tools[name] ? `tools.${name}` : 'defaults'}: ${unreachable}`);
    const compiled = compileRules(file, name, entries[name], tools[name]?.rules ?? [], problems);
    if (compiled.length > 0) conditional[name] = compiled;
  }
  const fallback = layer(BASE_TOOL_POLICY, defaults);
  const unreachable = unreachableReason(fallback.rule);
  if (unreachable) problems.push(`${file}: defaults: ${unreachable}`);
  if (problems.length > 0) return { ok: false, problems: [...new Set(problems)] };
  return {
    ok: true,
    policy: createPolicy(fallback, entries, file, conditional, { postMessageLinkPreviews }),
  };
}

/** The valid parts of a file that has problems: each rule without its invalid or unknown fields. */
function salvage(json: unknown): { defaults?: FileRule; tools?: Record<string, FileTool> } {
  if (!isObject(json)) return {};
  const tools: Record<string, FileTool> = {};
  if (isObject(json.tools))
    for (const [name, rule] of Object.entries(json.tools)) tools[name] = validFields(toolSchema, rule);
  return { defaults: validFields(ruleSchema, json.defaults), tools };
}

/** The fields of `rule` that are valid on their own, parsed; unknown and invalid ones are left out. */
function validFields<S extends typeof ruleSchema | typeof toolSchema>(schema: S, rule: unknown): z.infer<S> {
  if (!isObject(rule)) return {} as z.infer<S>;
  const shape: Record<string, z.ZodType | undefined> = schema.shape;
  const kept = Object.entries(rule).flatMap(([key, value]) => {
    const field = shape[key]?.safeParse(value);
    return field?.success ? [[key, field.data] as const] : [];
  });
  return Object.fromEntries(kept) as z.infer<S>;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A tool's conditional rules, each laid over the tool's entry and its `when` compiled. Adds a problem, with its
 * place, for an expression that does not compile or names an unknown variable, and for a rule nobody could
 * satisfy (a `when` that cannot be evaluated fails closed, so even a rule that waives approval needs deciders).
 */
function compileRules(
  file: string,
  tool: string,
  entry: ToolPolicy,
  rules: readonly (FileRule & { when: string })[],
  problems: string[],
): ConditionalRule[] {
  const compiled: ConditionalRule[] = [];
  rules.forEach(({ when, ...fields }, index) => {
    const place = `tools.${tool}.rules[${index}]`;
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
