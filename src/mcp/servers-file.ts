import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** Server names become tool-name prefixes (`SERVER__TOOL`), so `__` may not appear inside one. */
const SERVER_NAME = /^[a-zA-Z0-9](?:[a-zA-Z0-9-]|_(?!_)){0,31}$/;

const stringMap = z.record(z.string(), z.string()).default({});

const stdioServerSchema = z.strictObject({
  /** The executable; found on PATH like a shell would. */
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  /** Added to the few variables every server inherits (HOME, LOGNAME, PATH, SHELL, TERM, USER). */
  env: stringMap,
  cwd: z.string().min(1).optional(),
});

const httpServerSchema = z.strictObject({
  /** A streamable HTTP endpoint, e.g. `https://mcp.example.com/mcp`. */
  url: z.url({ protocol: /^https?$/, message: 'must be an http:// or https:// URL' }),
  headers: stringMap,
});

export type McpStdioServer = { name: string; kind: 'stdio' } & z.infer<typeof stdioServerSchema>;
export type McpHttpServer = { name: string; kind: 'http' } & z.infer<typeof httpServerSchema>;
export type McpServerConfig = McpStdioServer | McpHttpServer;

export type McpServersResult = { ok: true; servers: McpServerConfig[] } | { ok: false; problems: string[] };

const fileSchema = z.strictObject({ mcpServers: z.record(z.string(), z.unknown()) });

/**
 * Reads and validates the MCP servers file. Every problem is reported with its place in the file
 * (`mcpServers.github.url: must be an http:// or https:// URL`), all at once.
 *
 * @example
 * // { "mcpServers": { "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/srv"] },
 * //                   "tickets": { "url": "https://mcp.example.com/mcp", "headers": { "Authorization": "Bearer …" } } } }
 * const result = readMcpServersFile('./mcp-servers.json');
 */
export function readMcpServersFile(path: string): McpServersResult {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { ok: false, problems: [`cannot read the file (${describeFsError(error)})`] };
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      problems: [`not valid JSON (${error instanceof Error ? error.message : 'parse error'})`],
    };
  }
  return parseMcpServers(json);
}

/**
 * Validates the parsed JSON of an MCP servers file. Each server is checked even when the file around it, or
 * its name, is wrong, so one run lists every problem.
 */
export function parseMcpServers(json: unknown): McpServersResult {
  const file = fileSchema.safeParse(json);
  const problems = file.success ? [] : describeIssues([], file.error.issues);
  const entries = isObject(json) && isObject(json.mcpServers) ? Object.entries(json.mcpServers) : [];
  const servers: McpServerConfig[] = [];
  for (const [name, value] of entries) {
    const at = `mcpServers.${name}`;
    if (!SERVER_NAME.test(name))
      problems.push(`${at}: server names use letters, digits, - and single _, at most 32 characters`);
    const kind = serverKind(value);
    if (kind === 'both') {
      problems.push(
        `${at}: has both "command" and "url"; a server is either a stdio server (command) or a streamable HTTP server (url)`,
      );
      continue;
    }
    if (!kind) {
      problems.push(`${at}: needs either "command" (a stdio server) or "url" (a streamable HTTP server)`);
      continue;
    }
    const parsed = parseServer(name, kind, value);
    if (parsed.ok) servers.push(parsed.server);
    else problems.push(...describeIssues(['mcpServers', name], parsed.issues));
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, servers };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function parseServer(
  name: string,
  kind: 'stdio' | 'http',
  value: unknown,
): { ok: true; server: McpServerConfig } | { ok: false; issues: z.core.$ZodIssue[] } {
  if (kind === 'stdio') {
    const parsed = stdioServerSchema.safeParse(value);
    return parsed.success
      ? { ok: true, server: { name, kind, ...parsed.data } }
      : { ok: false, issues: parsed.error.issues };
  }
  const parsed = httpServerSchema.safeParse(value);
  return parsed.success
    ? { ok: true, server: { name, kind, ...parsed.data } }
    : { ok: false, issues: parsed.error.issues };
}

function serverKind(value: unknown): 'stdio' | 'http' | 'both' | undefined {
  if (!isObject(value)) return undefined;
  if ('command' in value && 'url' in value) return 'both';
  if ('command' in value) return 'stdio';
  if ('url' in value) return 'http';
  return undefined;
}

function describeIssues(prefix: string[], issues: readonly z.core.$ZodIssue[]): string[] {
  return issues.map((issue) => {
    const path = [...prefix, ...issue.path.map(String)];
    const message = issue.message;
    return `${path.length > 0 ? path.join('.') : '(top level)'}: ${message}`;
  });
}

function describeFsError(error: unknown): string {
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.message : 'unknown error';
}
