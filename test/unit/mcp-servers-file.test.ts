import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadMcpServers } from '../../src/mcp/load-mcp-servers.js';
import { parseMcpServers, readMcpServersFile } from '../../src/mcp/servers-file.js';

describe('MCP_SERVERS_FILE', () => {
  it('reads stdio and streamable HTTP servers, with defaults for the optional fields', () => {
    const result = parseMcpServers({
      mcpServers: {
        files: { command: 'npx', args: ['-y', 'server-filesystem', '/srv'], env: { LOG: '1' } },
        tickets: { url: 'https://mcp.example.com/mcp', headers: { Authorization: 'Bearer x' } },
        bare: { command: 'my-server' },
      },
    });
    expect(result).toEqual({
      ok: true,
      servers: [
        {
          name: 'files',
          kind: 'stdio',
          command: 'npx',
          args: ['-y', 'server-filesystem', '/srv'],
          env: { LOG: '1' },
        },
        {
          name: 'tickets',
          kind: 'http',
          url: 'https://mcp.example.com/mcp',
          headers: { Authorization: 'Bearer x' },
        },
        { name: 'bare', kind: 'stdio', command: 'my-server', args: [], env: {} },
      ],
    });
  });

  it('names the place in the file of every problem, all at once', () => {
    const result = parseMcpServers({
      mcpServers: {
        files: { command: 'npx', args: ['ok', 3] },
        tickets: { url: 'ftp://example.com', headers: { A: 1 } },
        neither: { cmd: 'x' },
        typo: { command: 'x', environment: {} },
      },
    });
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.problems).toEqual([
      expect.stringMatching(/^mcpServers\.files\.args\.1: /),
      'mcpServers.tickets.url: must be an http:// or https:// URL',
      expect.stringMatching(/^mcpServers\.tickets\.headers\.A: /),
      'mcpServers.neither: needs either "command" (a stdio server) or "url" (a streamable HTTP server)',
      'mcpServers.typo: Unrecognized key: "environment"',
    ]);
  });

  it('a wrong name, an unknown top-level key or both kinds at once hide no other problem', () => {
    const result = parseMcpServers({
      mcpServers: {
        my__server: { url: 'mcp.example.com' },
        both: { command: 'x', url: 'ftp://example.com' },
        tickets: { url: 'not a url', header: {} },
      },
      servers: {},
    });
    expect(result).toEqual({
      ok: false,
      problems: [
        '(top level): Unrecognized key: "servers"',
        expect.stringMatching(/^mcpServers\.my__server: server names use letters, digits/),
        'mcpServers.my__server.url: must be an http:// or https:// URL',
        'mcpServers.both: has both "command" and "url"; a server is either a stdio server (command) or a streamable HTTP server (url)',
        'mcpServers.tickets.url: must be an http:// or https:// URL',
        'mcpServers.tickets: Unrecognized key: "header"',
      ],
    });
  });

  it('refuses server names that would make ambiguous tool names', () => {
    const result = parseMcpServers({ mcpServers: { my__server: { command: 'x' } } });
    expect(result).toEqual({
      ok: false,
      problems: [expect.stringMatching(/^mcpServers\.my__server: server names use letters, digits/)],
    });
    const misnamed = parseMcpServers({ servers: {} });
    expect(misnamed.ok).toBe(false);
    if (!misnamed.ok) expect(misnamed.problems).toContain('(top level): Unrecognized key: "servers"');
  });

  it('a missing or malformed file stops start-up with the path in the message', () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-file-'));
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{ "mcpServers": ');
    expect(readMcpServersFile(bad)).toMatchObject({
      ok: false,
      problems: [expect.stringMatching(/^not valid JSON/)],
    });
    expect(readMcpServersFile(join(dir, 'none.json'))).toEqual({
      ok: false,
      problems: ['cannot read the file (ENOENT)'],
    });
    const invalid = join(dir, 'invalid.json');
    writeFileSync(invalid, JSON.stringify({ mcpServers: { a: { url: 'nope' } } }));
    expect(() => loadMcpServers(invalid)).toThrow(
      `MCP_SERVERS_FILE ${invalid} is invalid:\n  - mcpServers.a.url: must be an http:// or https:// URL`,
    );
    expect(loadMcpServers(undefined)).toEqual([]);
  });
});
