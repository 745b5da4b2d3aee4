import { Environment } from '@marcbachmann/cel-js';
import type { ToolPolicy } from './approval.js';

/** What a rule's `when` can read about a call. */
export interface CallFacts {
  /** The call's arguments as the model sent them (parsed JSON; `{}` when they are not a JSON object). */
  args: unknown;
  tool: string;
  requester: string;
  channel: string;
  team: string;
  /** The agent making the call: `main` (the bot's own), or the innermost agent of the agents file. */
  agent: string;
}

/** The variables a `when` expression may name, with their CEL types. */
export const WHEN_VARIABLES = {
  args: 'map',
  tool: 'string',
  requester: 'string',
  channel: 'string',
  team: 'string',
  agent: 'string',
} as const;

/** One of a tool's `rules`, compiled, with the tool's fields and its own already laid together. */
export interface ConditionalRule {
  /** `tools.post_message.rules[1]`, for the card, the audit log and messages. */
  place: string;
  when: string;
  /** The value of `when` for a call; throws when it cannot be evaluated. */
  test: (facts: CallFacts) => unknown;
  policy: ToolPolicy;
}

export type CompiledWhen = { ok: true; test: (facts: CallFacts) => unknown } | { ok: false; message: string };

let environment: Environment | undefined;

/** Building an environment is costly: one, shared, read-only once built. */
function celEnvironment(): Environment {
  if (!environment) {
    const env = new Environment();
    for (const [name, type] of Object.entries(WHEN_VARIABLES)) env.registerVariable(name, type);
    environment = env;
  }
  return environment;
}

/** First line of a CEL error, without the caret drawing that follows it. */
function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]?.trim() || 'invalid expression';
}

/**
 * Compiles a `when` expression: it must parse, name only the known variables, and give true or false (or a
 * value only known when it runs, such as `args.flag`).
 */
export function compileWhen(expression: string): CompiledWhen {
  const env = celEnvironment();
  try {
    const checked = env.check(expression);
    if (!checked.valid) return { ok: false, message: firstLine(checked.error) };
    if (checked.type !== 'bool' && checked.type !== 'dyn')
      return { ok: false, message: `gives a ${checked.type}, not true or false` };
    const parsed = env.parse(expression);
    return { ok: true, test: (facts) => parsed({ ...facts }) };
  } catch (error) {
    return { ok: false, message: firstLine(error) };
  }
}

/**
 * The policy for one call: the tool's own fields, with the first rule whose `when` is true laid over them (its
 * place recorded in the rule as `appliedRule`, so the card, the audit log and later reviews can name it).
 * The first rule whose `when` is true decides; none true → the tool's own fields. A `when` that cannot be
 * evaluated (an argument missing, a value of the wrong type) or gives something other than true or false
 * counts as matching its rule, and approval is then required whatever that rule says: failing closed.
 */
export function resolveCall(
  entry: ToolPolicy,
  rules: readonly ConditionalRule[],
  facts: CallFacts,
): ToolPolicy {
  for (const rule of rules) {
    let value: unknown;
    try {
      value = rule.test(facts);
    } catch (error) {
      return failedClosed(rule, firstLine(error));
    }
    if (value === true)
      return {
        ...rule.policy,
        rule: { ...rule.policy.rule, appliedRule: { place: rule.place, when: rule.when } },
      };
    if (value !== false) return failedClosed(rule, `gave ${describeValue(value)}, not true or false`);
  }
  return entry;
}

function failedClosed(rule: ConditionalRule, error: string): ToolPolicy {
  return {
    requireApproval: true,
    rule: { ...rule.policy.rule, appliedRule: { place: rule.place, when: rule.when, error } },
  };
}

function describeValue(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return 'a string';
  if (typeof value === 'number' || typeof value === 'bigint') return 'a number';
  return 'a value';
}

/** The arguments as a CEL map: the parsed ones when they passed the tool's schema, else the raw JSON object. */
export function argumentsForRules(
  parsed: { ok: true; args: Record<string, unknown> } | { ok: false },
  raw: string,
): unknown {
  return parsed.ok ? parsed.args : jsonObject(raw);
}

/** Arguments text as a CEL map: the JSON object it holds, else `{}`. */
export function jsonObject(raw: string): unknown {
  try {
    const value: unknown = JSON.parse(raw);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};
  } catch {
    return {};
  }
}
