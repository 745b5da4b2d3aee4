import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { type ApprovalPolicy, builtInPolicy, createPolicy } from './policy.js';
import {
  type FileRule,
  type FileTeam,
  type FileTool,
  ruleSchema,
  teamKeyProblem,
  teamSchema,
  toolSchema,
} from './policy-file-schema.js';
import { policyProblem } from './policy-problems.js';
import type { PolicyTier } from './policy-summary.js';
import { buildTier } from './policy-tiers.js';

export type PolicyLoadResult = { ok: true; policy: ApprovalPolicy } | { ok: false; problems: string[] };

const fileSchema = z.strictObject({
  /** Let Slack show link previews on messages that `post_message` sends (off by default). */
  postMessageLinkPreviews: z.boolean().optional(),
  defaults: ruleSchema.optional(),
  tools: z.record(z.string(), toolSchema).optional(),
  /** Per workspace (team ID `T…`): `defaults` and `tools` laid over the file's own for its requests. */
  teams: z.record(z.string(), teamSchema).optional(),
});

/**
 * The active policy: the built-in defaults when no file is configured, else the file's rules laid over them
 * (built-in entry of the tool, then the file's `defaults`, then the file's entry for the tool; for a workspace
 * with a section in `teams`, its `defaults` and entries at the same places, see `buildTier`). `knownTools`
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
  const problems = nameProblems(json, knownTools).map((problem) => `${file}: ${problem}`);
  const parsed = fileSchema.safeParse(json);
  if (!parsed.success) problems.push(...parsed.error.issues.map((i) => policyProblem(file, i)));
  // Rules nobody can satisfy are found on the valid parts too, so one run lists every problem.
  const { defaults = {}, tools = {}, teams = {} } = parsed.success ? parsed.data : salvage(json);
  const postMessageLinkPreviews = parsed.success ? (parsed.data.postMessageLinkPreviews ?? false) : false;
  const ownLevel = { prefix: '', defaults, tools };
  const own = buildTier(file, knownTools, [ownLevel], problems);
  const teamTiers: Record<string, PolicyTier> = {};
  for (const [team, section] of Object.entries(teams)) {
    if (teamKeyProblem(team)) continue;
    const level = { prefix: `teams.${team}.`, defaults: section.defaults ?? {}, tools: section.tools ?? {} };
    teamTiers[team] = buildTier(file, knownTools, [ownLevel, level], problems, own).tier;
  }
  if (problems.length > 0) return { ok: false, problems: [...new Set(problems)] };
  const { defaults: fallback, tools: entries, rules } = own.tier;
  return {
    ok: true,
    policy: createPolicy(fallback, entries, file, rules, { postMessageLinkPreviews, teams: teamTiers }),
  };
}

/** MCP tools are added at run time and named `SERVER__TOOL`; they may have rules before they exist. */
const MCP_TOOL = /^[A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*__[A-Za-z0-9_-]+$/;

/** Unknown tool names (in `tools` and every workspace's `tools`) and keys of `teams` that are no team ID. */
function nameProblems(json: unknown, knownTools: readonly string[]): string[] {
  if (!isObject(json)) return [];
  const toolProblems = (tools: unknown, prefix: string) =>
    (isObject(tools) ? Object.keys(tools) : [])
      .filter((name) => !knownTools.includes(name) && !MCP_TOOL.test(name))
      .map(
        (name) =>
          `${prefix}tools.${name}: unknown tool "${name}"; use one of ${knownTools.join(', ')}, or SERVER__TOOL for an MCP tool`,
      );
  const teams = isObject(json.teams) ? Object.entries(json.teams) : [];
  return [
    ...toolProblems(json.tools, ''),
    ...teams.flatMap(([team, section]) => {
      const keyProblem = teamKeyProblem(team);
      if (keyProblem) return [`teams.${team}: ${keyProblem}`];
      return isObject(section) ? toolProblems(section.tools, `teams.${team}.`) : [];
    }),
  ];
}

/** The valid parts of a file that has problems: each rule without its invalid or unknown fields. */
function salvage(json: unknown): {
  defaults?: FileRule;
  tools?: Record<string, FileTool>;
  teams?: Record<string, FileTeam>;
} {
  if (!isObject(json)) return {};
  const teams: Record<string, FileTeam> = {};
  if (isObject(json.teams))
    for (const [team, section] of Object.entries(json.teams))
      if (isObject(section)) teams[team] = salvageLevel(section);
  return { ...salvageLevel(json), teams };
}

function salvageLevel(level: Record<string, unknown>): {
  defaults: FileRule;
  tools: Record<string, FileTool>;
} {
  const tools: Record<string, FileTool> = {};
  if (isObject(level.tools))
    for (const [name, rule] of Object.entries(level.tools)) tools[name] = validFields(toolSchema, rule);
  return { defaults: validFields(ruleSchema, level.defaults), tools };
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
