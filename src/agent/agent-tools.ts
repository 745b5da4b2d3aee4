import { z } from 'zod';
import { AppError } from '../errors.js';
import { waitingCalls } from './agent-frames.js';
import type { AgentDefinition } from './agents-file.js';
import type { ChatModel } from './model.js';
import type { RunState } from './run-state.js';
import { type AgentTool, defineTool } from './tool.js';
import { ToolRegistry } from './tool-registry.js';

/** What the calling agent sends: the task, as the OpenAI Agents SDK's `agent.asTool()` takes it. */
const agentInput = z.object({
  input: z.string().describe('The task for the agent, with everything it needs to know to do it.'),
});

/**
 * An agent of the agents file as a tool of the agent that calls it. Its calls never reach `execute`: the
 * runner opens a frame in which the agent runs its own loop, and its answer becomes the call's output.
 */
export function agentAsTool(agent: AgentDefinition): AgentTool {
  const tool = defineTool({
    name: agent.name,
    description: agent.description,
    parameters: agentInput,
    needsApproval: agent.needsApproval,
    execute: () => {
      throw new AppError('tool.invalid_definition', `The agent ${agent.name} runs inside the run, not alone`);
    },
  });
  return { ...tool, agent: agent.name };
}

/** The task a call of an agent gives it. */
export function agentTask(args: Record<string, unknown>): string {
  return agentInput.parse(args).input;
}

/** The agents of the agents file, by name, and what each gets: its tools and its model. */
export class AgentCatalog {
  readonly #agents: Map<string, AgentDefinition>;

  constructor(agents: readonly AgentDefinition[] = []) {
    this.#agents = new Map(agents.map((agent) => [agent.name, agent]));
  }

  get(name: string): AgentDefinition | undefined {
    return this.#agents.get(name);
  }

  /** Each agent as a tool, for the registry the bot's own agent calls from. */
  tools(): AgentTool[] {
    return [...this.#agents.values()].map(agentAsTool);
  }

  /**
   * The tools `agent` may call, as registered now (an MCP server that went away takes its tools with it): a
   * call of any other tool is answered as an unknown tool.
   */
  toolsOf(agent: AgentDefinition, registry: ToolRegistry): ToolRegistry {
    return new ToolRegistry(agent.tools.flatMap((name) => registry.get(name) ?? []));
  }

  /** The bot's model client asking with the agent's instructions, and its model when it names one. */
  modelOf(agent: AgentDefinition, model: ChatModel): ChatModel {
    return {
      complete: (request) =>
        model.complete({
          ...request,
          instructions: agent.instructions,
          ...(agent.model ? { model: agent.model } : {}),
        }),
    };
  }
}

/** Why a stored run cannot go on here: an agent at work, or a tool a call waits for, is gone. */
export function unavailableOnResume(
  state: RunState,
  tools: ToolRegistry,
  agents: AgentCatalog,
): string | undefined {
  const gone = state.frames.find((frame) => !agents.get(frame.agent));
  if (gone) return `The agent ${gone.agent} is no longer available.`;
  const missing = waitingCalls(state).find((call) => !tools.has(call.name));
  return missing ? `The tool ${missing.name} is no longer available.` : undefined;
}
