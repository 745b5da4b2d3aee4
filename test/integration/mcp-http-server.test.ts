import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ToolRegistry } from '../../src/agent/tool-registry.js';
import { silentLogger } from '../../src/logger.js';
import { McpServers } from '../../src/mcp/mcp-servers.js';
import { TOOL_CONTEXT } from '../support/tool-context.js';

/** A stateless streamable HTTP MCP server on 127.0.0.1 with one `echo` tool; records each Authorization. */
async function startHttpMcpServer(): Promise<{
  url: string;
  authorizations: (string | undefined)[];
  server: Server;
}> {
  const authorizations: (string | undefined)[] = [];
  const server = createServer((req, res) => {
    authorizations.push(req.headers.authorization);
    const mcp = new McpServer({ name: 'remote', version: '1.0.0' });
    mcp.registerTool(
      'echo',
      { description: 'Echoes text.', inputSchema: { text: z.string() } },
      async ({ text }) => ({ content: [{ type: 'text', text: `echo: ${text}` }] }),
    );
    // Without a session id generator the transport is stateless: one per request.
    const transport = new StreamableHTTPServerTransport({});
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    void mcp.connect(transport).then(() => transport.handleRequest(req, res));
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, authorizations, server };
}

describe('MCP over streamable HTTP', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const step of cleanup.splice(0)) await step();
  });

  it('sends the configured headers, registers SERVER__TOOL, calls it, and withdraws it once the server is gone', async () => {
    const remote = await startHttpMcpServer();
    const registry = new ToolRegistry();
    const servers = new McpServers({
      servers: [
        { name: 'remote', kind: 'http', url: remote.url, headers: { Authorization: 'Bearer t0k3n' } },
      ],
      registry,
      logger: silentLogger,
    });
    cleanup.push(() => servers.close());
    await servers.connectAll();
    expect(servers.status()).toEqual({ remote: { state: 'connected', tools: ['remote__echo'] } });
    expect(remote.authorizations.length).toBeGreaterThan(0);
    expect(remote.authorizations.every((value) => value === 'Bearer t0k3n')).toBe(true);

    const echo = registry.get('remote__echo');
    if (!echo) throw new Error('remote__echo was not registered');
    expect(await echo.needsApproval({ text: 'x' }, TOOL_CONTEXT)).toBe(true);
    expect(echo.parseArguments('{"text": 5}')).toEqual({
      ok: false,
      error: 'The arguments are invalid: text: must be string.',
    });
    expect(await echo.execute({ text: 'hi' }, TOOL_CONTEXT)).toBe('echo: hi');

    remote.server.closeAllConnections();
    await new Promise<void>((done) => remote.server.close(() => done()));
    await expect(echo.execute({ text: 'again' }, TOOL_CONTEXT)).rejects.toThrow();
    expect(registry.has('remote__echo')).toBe(false);
    expect(servers.status().remote).toMatchObject({ state: 'disconnected' });
  });

  it('a server that is not there is reported as failed and registers nothing', async () => {
    const remote = await startHttpMcpServer();
    await new Promise<void>((done) => remote.server.close(() => done()));
    const registry = new ToolRegistry();
    const servers = new McpServers({
      servers: [{ name: 'gone', kind: 'http', url: remote.url, headers: {} }],
      registry,
      logger: silentLogger,
    });
    await servers.connectAll();
    expect(servers.status().gone).toMatchObject({ state: 'failed' });
    expect(registry.names()).toEqual([]);
  });
});
