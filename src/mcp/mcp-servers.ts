import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ToolRegistry } from '../agent/tool-registry.js';
import { AppError, describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { createMcpTool } from './mcp-tool.js';
import type { McpServerConfig } from './servers-file.js';
import { toolResultText } from './tool-result-text.js';

/** The SDK and the tool adapter, loaded with the first server (see mcp-sdk.ts). */
async function loadSdk() {
  const [sdk, tools] = await Promise.all([import('./mcp-sdk.js'), import('./mcp-tool.js')]);
  return { ...sdk, createMcpTool: tools.createMcpTool };
}

type Sdk = Awaited<ReturnType<typeof loadSdk>>;

/** What `/healthz` and the terminal report about one server. */
export type McpServerStatus =
  | { state: 'connecting' }
  | { state: 'connected'; tools: string[] }
  /** It never came up; nothing of it is registered. */
  | { state: 'failed'; error: string }
  /** It was up and went away; its tools were withdrawn. */
  | { state: 'disconnected'; error: string };

export interface McpServersDeps {
  servers: readonly McpServerConfig[];
  registry: ToolRegistry;
  logger: Logger;
  /** Start-up budget per server (spawn or HTTP handshake, then `tools/list`); default 15 s. */
  connectTimeoutMs?: number;
  /** Budget of one tool call; default 60 s. */
  callTimeoutMs?: number;
}

interface Connection {
  client: Client;
  tools: string[];
  closing: boolean;
}

const CLIENT_INFO = { name: 'slack-approval-agent', version: '0.1.0' };

/**
 * The MCP servers the agent uses. Each server's tools are registered as `SERVER__TOOL` once it is up; a
 * server that does not come up, or goes away later, is logged and reported, and its tools are withdrawn
 * while the bot goes on. A run paused on a withdrawn tool then fails closed when it resumes.
 */
export class McpServers {
  readonly #deps: McpServersDeps;
  readonly #status = new Map<string, McpServerStatus>();
  readonly #connections = new Map<string, Connection>();

  constructor(deps: McpServersDeps) {
    this.#deps = deps;
    for (const server of deps.servers) this.#status.set(server.name, { state: 'connecting' });
  }

  /** Connects every server in parallel. Never rejects: failures are recorded in `status()`. */
  async connectAll(): Promise<void> {
    await Promise.all(this.#deps.servers.map((server) => this.#connect(server)));
  }

  status(): Record<string, McpServerStatus> {
    return Object.fromEntries(this.#status);
  }

  async close(): Promise<void> {
    const open = [...this.#connections.values()];
    for (const connection of open) connection.closing = true;
    await Promise.all(open.map((c) => c.client.close().catch(() => undefined)));
  }

  async #connect(server: McpServerConfig): Promise<void> {
    const { logger, connectTimeoutMs = 15_000 } = this.#deps;
    const sdk = await loadSdk();
    const client = new sdk.Client(CLIENT_INFO);
    const connection: Connection = { client, tools: [], closing: false };
    try {
      const transport = sdk.transportFor(server, (text) => {
        // The server's own diagnostics: kept out of the terminal, available at LOG_LEVEL=debug.
        logger.debug('MCP server stderr', { server: server.name, text });
      });
      await client.connect(transport, { timeout: connectTimeoutMs });
      const descriptors = await listAllTools(client, connectTimeoutMs);
      connection.tools = this.#register(sdk, server.name, descriptors, connection);
    } catch (error) {
      connection.closing = true;
      await client.close().catch(() => undefined);
      // fetch hides why it failed (refused, unknown host) in its cause.
      const cause =
        error instanceof Error && error.cause !== undefined ? ` (${describeError(error.cause)})` : '';
      const message = `${describeError(error)}${cause}`;
      this.#status.set(server.name, { state: 'failed', error: message });
      logger.error('MCP server failed to start; its tools are not available', {
        server: server.name,
        error: message,
      });
      return;
    }
    this.#connections.set(server.name, connection);
    client.onclose = () => this.#withdraw(server.name, connection, 'the connection closed');
    this.#status.set(server.name, { state: 'connected', tools: connection.tools });
    logger.info('MCP server connected', { server: server.name, tools: connection.tools.join(',') });
  }

  #register(sdk: Sdk, serverName: string, descriptors: Descriptor[], connection: Connection): string[] {
    const registered: string[] = [];
    for (const descriptor of descriptors) {
      const created = sdk.createMcpTool(serverName, descriptor, (name, args) =>
        this.#call(sdk, serverName, connection, name, args),
      );
      const reason = !created.ok
        ? created.reason
        : this.#deps.registry.has(created.tool.name)
          ? `another tool is already called ${created.tool.name}`
          : undefined;
      if (!created.ok || reason) {
        this.#deps.logger.warn('MCP tool skipped', { server: serverName, tool: descriptor.name, reason });
        continue;
      }
      this.#deps.registry.register(created.tool);
      registered.push(created.tool.name);
    }
    return registered;
  }

  async #call(
    sdk: Sdk,
    serverName: string,
    connection: Connection,
    toolName: string,
    args: Record<string, unknown>,
  ): Promise<string> {
    let result: unknown;
    try {
      result = await connection.client.callTool({ name: toolName, arguments: args }, undefined, {
        timeout: this.#deps.callTimeoutMs ?? 60_000,
      });
    } catch (error) {
      // A protocol error is the tool's failure; anything else means the server is gone.
      if (sdk.serverGone(error)) {
        this.#withdraw(serverName, connection, describeError(error));
        connection.closing = true;
        void connection.client.close().catch(() => undefined);
      }
      throw error;
    }
    const text = toolResultText(result);
    if (!text.ok) throw new AppError('tool.failed', text.error);
    return text.text;
  }

  #withdraw(serverName: string, connection: Connection, reason: string): void {
    if (connection.closing || this.#connections.get(serverName) !== connection) return;
    this.#connections.delete(serverName);
    for (const name of connection.tools) this.#deps.registry.unregister(name);
    this.#status.set(serverName, { state: 'disconnected', error: reason });
    this.#deps.logger.error('MCP server disconnected; its tools were withdrawn', {
      server: serverName,
      reason,
      tools: connection.tools.join(','),
    });
  }
}

type Descriptor = Parameters<typeof createMcpTool>[1];

async function listAllTools(client: Client, timeout: number): Promise<Descriptor[]> {
  const tools: Descriptor[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : {}, { timeout });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  return tools;
}
