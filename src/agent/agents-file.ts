import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { DEFAULT_AGENT } from '../approvals/approval.js';
import { AppError } from '../errors.js';

/** A named agent of the agents file: called like a tool, it runs its own loop inside the run. */
export interface AgentDefinition {
  name: string;
  /** What the calling agent reads about it (the tool's description). */
  description: string;
  /** Its system prompt. */
  instructions: string;
  /** A model of the bot's model server; none: the bot's own model (`OPENAI_MODEL`). */
  model: string | undefined;
  /** The tools it may call: built-in tools, MCP tools (`SERVER__TOOL`) and other agents. */
  tools: string[];
  /** Its model calls per call of it; none: the run's own bound. */
  maxTurns: number | undefined;
  /** Whether a call of it waits for a person first (as `needsApproval` of the SDK's `agent.asTool()`). */
  needsApproval: boolean;
}

/** What the agents file may name besides its own agents. */
export interface KnownTools {
  /** The built-in tools' names. */
  builtIn: readonly string[];
  /** The MCP servers of `MCP_SERVERS_FILE`: their tools, `SERVER__TOOL`, are known only once connected. */
  mcpServers: readonly string[];
}

export type AgentsFileResult = { ok: true; agents: AgentDefinition[] } | { ok: false; problems: string[] };

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const agentSchema = z.strictObject({
  name: z.string().regex(NAME, 'use 1 to 64 letters, digits, "_" or "-"'),
  description: z.string().trim().min(1, 'say in a sentence what the agent does (the caller reads it)'),
  instructions: z.string().trim().min(1, "write the agent's instructions (its system prompt)"),
  model: z.string().trim().min(1, 'name a model of the model server, or leave model out').optional(),
  tools: z.array(z.string()).default([]),
  maxTurns: z.number().int().min(1).max(100).optional(),
  needsApproval: z.boolean().default(false),
});

const fileSchema = z.strictObject({ agents: z.array(z.unknown()) });

/**
 * Reads and checks the agents file (`AGENTS_FILE`); every problem is listed at once, each with its place:
 * an invalid field, a name used twice or taken by a tool or by the bot's own agent, a tool nobody provides,
 * and agents that call each other in a circle (refused: a circle is bounded by the run's limits, but it is
 * nearly always a mistake, and a chain of cards that repeats itself helps nobody decide).
 */
export function readAgentsFile(path: string, known: KnownTools): AgentsFileResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const code = error instanceof Error && 'code' in error ? String(error.code) : 'unreadable';
    return { ok: false, problems: [`cannot read the file (${code})`] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { ok: false, problems: [`not valid JSON (${error instanceof Error ? error.message : 'syntax'})`] };
  }
  return parseAgents(json, known);
}

/** Checks the agents file's JSON (see `readAgentsFile`). */
export function parseAgents(json: unknown, known: KnownTools): AgentsFileResult {
  const file = fileSchema.safeParse(json);
  if (!file.success)
    return { ok: false, problems: ['use an object with "agents": a list of agents, each with a name'] };
  const problems: string[] = [];
  const agents: AgentDefinition[] = [];
  file.data.agents.forEach((entry, index) => {
    const parsed = agentSchema.safeParse(entry);
    if (!parsed.success) {
      for (const issue of parsed.error.issues)
        problems.push(`agents[${index}]${issue.path.map((p) => `.${String(p)}`).join('')}: ${issue.message}`);
      return;
    }
    agents.push({ model: undefined, maxTurns: undefined, ...parsed.data });
  });
  const names = agents.map((agent) => agent.name);
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) problems.push(`agents: "${name}" is named twice; give each agent its own name`);
    seen.add(name);
    if (name === DEFAULT_AGENT)
      problems.push(`agents: "${name}" is the bot's own agent; choose another name`);
    else if (known.builtIn.includes(name) || name.includes('__'))
      problems.push(`agents: "${name}" is the name of a tool; choose another name`);
  }
  for (const agent of agents) {
    for (const tool of agent.tools) {
      if (!isKnownTool(tool, names, known))
        problems.push(
          `agents.${agent.name}.tools: unknown tool "${tool}"; use a built-in tool (${known.builtIn.join(', ')}), SERVER__TOOL for a server of MCP_SERVERS_FILE, or another agent`,
        );
    }
  }
  const circle = firstCircle(agents);
  if (circle) problems.push(`agents: ${circle.join(' → ')} call each other in a circle; break it`);
  return problems.length > 0 ? { ok: false, problems: [...new Set(problems)] } : { ok: true, agents };
}

function isKnownTool(tool: string, agents: readonly string[], known: KnownTools): boolean {
  if (known.builtIn.includes(tool) || agents.includes(tool)) return true;
  const server = tool.split('__', 1)[0];
  return tool.includes('__') && server !== undefined && known.mcpServers.includes(server);
}

/** The first chain of agents that comes back to where it started, or undefined. */
function firstCircle(agents: readonly AgentDefinition[]): string[] | undefined {
  const byName = new Map(agents.map((agent) => [agent.name, agent]));
  const done = new Set<string>();
  const visit = (name: string, path: string[]): string[] | undefined => {
    const at = path.indexOf(name);
    if (at >= 0) return [...path.slice(at), name];
    if (done.has(name)) return undefined;
    for (const next of byName.get(name)?.tools ?? []) {
      if (!byName.has(next)) continue;
      const found = visit(next, [...path, name]);
      if (found) return found;
    }
    done.add(name);
    return undefined;
  };
  for (const agent of agents) {
    const found = visit(agent.name, []);
    if (found) return found;
  }
  return undefined;
}

/**
 * What is wrong with `AGENTS_FILE`, as one message listing every problem; undefined when it is unset or
 * valid. Checked at start-up, with the policy and MCP files.
 */
export function agentsFileProblem(path: string | undefined, known: KnownTools): string | undefined {
  if (!path) return undefined;
  const result = readAgentsFile(path, known);
  if (result.ok) return undefined;
  return `AGENTS_FILE ${path} is invalid:${result.problems.map((problem) => `\n  - ${problem}`).join('')}`;
}

/** The agents of `AGENTS_FILE` (none when it is unset). An invalid file throws `agentsFileProblem`. */
export function loadAgents(path: string | undefined, known: KnownTools): AgentDefinition[] {
  if (!path) return [];
  const result = readAgentsFile(path, known);
  if (result.ok) return result.agents;
  throw new AppError(
    'config.agents_file',
    agentsFileProblem(path, known) ?? `AGENTS_FILE ${path} is invalid`,
  );
}
