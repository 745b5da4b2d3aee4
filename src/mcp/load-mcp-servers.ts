import { AppError } from '../errors.js';
import { type McpServerConfig, readMcpServersFile } from './servers-file.js';

/**
 * What is wrong with `MCP_SERVERS_FILE`, as one message listing every problem with its place in the file;
 * undefined when it is unset or valid. Checked at start-up, before anything else is opened.
 */
export function mcpServersFileProblem(path: string | undefined): string | undefined {
  if (!path) return undefined;
  const result = readMcpServersFile(path);
  if (result.ok) return undefined;
  return `MCP_SERVERS_FILE ${path} is invalid:${result.problems.map((problem) => `\n  - ${problem}`).join('')}`;
}

/** The servers of `MCP_SERVERS_FILE` (none when it is unset). An invalid file throws `mcpServersFileProblem`. */
export function loadMcpServers(path: string | undefined): McpServerConfig[] {
  if (!path) return [];
  const result = readMcpServersFile(path);
  if (result.ok) return result.servers;
  throw new AppError(
    'config.mcp_servers_file',
    mcpServersFileProblem(path) ?? `MCP_SERVERS_FILE ${path} is invalid`,
  );
}

/** The names of the servers of `MCP_SERVERS_FILE` (none when it is unset or invalid): what `SERVER__TOOL` may name. */
export function mcpServerNames(path: string | undefined): string[] {
  if (!path) return [];
  const result = readMcpServersFile(path);
  return result.ok ? result.servers.map((server) => server.name) : [];
}
