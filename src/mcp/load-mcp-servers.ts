import { AppError } from '../errors.js';
import { type McpServerConfig, readMcpServersFile } from './servers-file.js';

/**
 * The servers of `MCP_SERVERS_FILE` (none when it is unset). An invalid file stops start-up with every
 * problem listed, each with its place in the file.
 */
export function loadMcpServers(path: string | undefined): McpServerConfig[] {
  if (!path) return [];
  const result = readMcpServersFile(path);
  if (result.ok) return result.servers;
  const problems = result.problems.map((problem) => `\n  - ${problem}`).join('');
  throw new AppError('config.mcp_servers_file', `MCP_SERVERS_FILE ${path} is invalid:${problems}`);
}
