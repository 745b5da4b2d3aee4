import { AppError } from '../errors.js';
import type { AgentTool } from './tool.js';

/** The tools the agent may call, by name. Runs store tool names only; tools are re-attached from here. */
export class ToolRegistry {
  readonly #tools = new Map<string, AgentTool>();

  constructor(tools: readonly AgentTool[] = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: AgentTool): void {
    if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.name))
      throw new AppError('tool.invalid_definition', `Invalid tool name: ${tool.name}`);
    if (this.#tools.has(tool.name))
      throw new AppError('tool.invalid_definition', `Tool registered twice: ${tool.name}`);
    this.#tools.set(tool.name, tool);
  }

  /** Withdraws a tool (its MCP server went away). A paused run that needs it then fails closed on resume. */
  unregister(name: string): boolean {
    return this.#tools.delete(name);
  }

  get(name: string): AgentTool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  names(): string[] {
    return [...this.#tools.keys()];
  }

  list(): AgentTool[] {
    return [...this.#tools.values()];
  }
}
