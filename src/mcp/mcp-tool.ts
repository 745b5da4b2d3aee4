import type { AgentTool } from '../agent/tool.js';
import { AppError } from '../errors.js';
import { compileArgumentSchema } from './json-schema-arguments.js';

/** What an MCP server says about one of its tools (`tools/list`), as far as the agent needs it. */
export interface McpToolDescriptor {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
}

/** Calls the tool on its server; resolves with the text the model reads, rejects on a tool error. */
export type McpToolCaller = (toolName: string, args: Record<string, unknown>) => Promise<string>;

export type McpToolResult = { ok: true; tool: AgentTool } | { ok: false; reason: string };

/** The separator between server and tool in the agent's tool names: `github__create_issue`. */
export const MCP_NAME_SEPARATOR = '__';

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Wraps a server's tool as an agent tool named `SERVER__TOOL`. The server's input schema is passed to the
 * model and checked before every call. It needs approval (a policy rule for its name may relax that): the
 * bot cannot know what a foreign tool does.
 */
export function createMcpTool(
  serverName: string,
  descriptor: McpToolDescriptor,
  call: McpToolCaller,
): McpToolResult {
  const name = `${serverName}${MCP_NAME_SEPARATOR}${descriptor.name}`;
  if (!TOOL_NAME.test(name)) {
    return { ok: false, reason: `${name} is not a valid tool name (letters, digits, _ and -, at most 64)` };
  }
  const compiled = compileArgumentSchema(descriptor.inputSchema);
  if (!compiled.ok) return { ok: false, reason: `its input schema does not compile: ${compiled.error}` };
  const description = descriptor.description?.trim() || `The ${descriptor.name} tool.`;
  return {
    ok: true,
    tool: {
      name,
      description: `${description} (MCP server "${serverName}")`,
      jsonSchema: compiled.jsonSchema,
      approvalMode: true,
      parseArguments: compiled.parse,
      needsApproval: async () => true,
      execute: async (args) => {
        // The runner parsed these already; parse again so nothing unchecked ever reaches the server.
        const checked = compiled.parse(JSON.stringify(args));
        if (!checked.ok) throw new AppError('tool.invalid_argument', checked.error);
        return await call(descriptor.name, checked.args);
      },
    },
  };
}
