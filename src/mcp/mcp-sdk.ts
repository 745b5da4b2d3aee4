import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from './servers-file.js';

/**
 * Everything of the MCP SDK the bot uses, in one module that mcp-servers.ts loads only when a server is
 * configured: most installs have none, and the SDK (with its schema and HTTP code) costs start-up time and memory.
 */
export { Client };

/** The transport of a configured server; a stdio server's stderr goes to `onStderr`. */
export function transportFor(server: McpServerConfig, onStderr: (text: string) => void): Transport {
  if (server.kind === 'http') {
    return new StreamableHTTPClientTransport(new URL(server.url), {
      requestInit: { headers: server.headers },
    });
  }
  const transport = new StdioClientTransport({
    command: server.command,
    args: server.args,
    env: server.env,
    stderr: 'pipe',
    ...(server.cwd ? { cwd: server.cwd } : {}),
  });
  transport.stderr?.on('data', (chunk: Buffer) => onStderr(chunk.toString('utf8')));
  return transport;
}

/** A failed call that says nothing about the tool but that the server is gone (not a protocol error). */
export function serverGone(error: unknown): boolean {
  return !(error instanceof McpError) || error.code === ErrorCode.ConnectionClosed;
}
