import { describe, expect, it } from 'vitest';
import { compileArgumentSchema } from '../../src/mcp/json-schema-arguments.js';
import { createMcpTool } from '../../src/mcp/mcp-tool.js';
import { toolResultText } from '../../src/mcp/tool-result-text.js';
import { TOOL_CONTEXT } from '../support/tool-context.js';

describe('MCP tool arguments: checked against the server schema before any call', () => {
  it('draft-07 schemas (as zod-based servers send them) and the 2020-12 default both validate', () => {
    const draft07 = compileArgumentSchema({
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { email: { type: 'string', format: 'email' } },
      required: ['email'],
      additionalProperties: false,
    });
    if (!draft07.ok) throw new Error(draft07.error);
    expect(draft07.jsonSchema).not.toHaveProperty('$schema');
    expect(draft07.parse('{"email":"a@example.com"}')).toEqual({
      ok: true,
      args: { email: 'a@example.com' },
    });
    expect(draft07.parse('{"email":"nope","x":1}')).toEqual({
      ok: false,
      error:
        'The arguments are invalid: (root): must NOT have additional properties (x); email: must match format "email".',
    });
    const draft2020 = compileArgumentSchema({
      type: 'object',
      properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { type: 'integer' }] } },
    });
    if (!draft2020.ok) throw new Error(draft2020.error);
    expect(draft2020.parse('{"pair":["a", 1.5]}')).toEqual({
      ok: false,
      error: 'The arguments are invalid: pair.1: must be integer.',
    });
  });

  it('not JSON, not an object, or a schema that does not compile: readable failures', () => {
    const compiled = compileArgumentSchema({ type: 'object' });
    if (!compiled.ok) throw new Error(compiled.error);
    expect(compiled.parse('{')).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^The arguments are not valid JSON/),
    });
    expect(compiled.parse('[1]')).toEqual({ ok: false, error: 'The arguments must be a JSON object.' });
    expect(compiled.parse('')).toEqual({ ok: true, args: {} });
    expect(compileArgumentSchema({ type: 'object', properties: { a: { type: 'no-such-type' } } }).ok).toBe(
      false,
    );
  });
});

describe('createMcpTool', () => {
  const descriptor = {
    name: 'write',
    description: 'Writes.',
    inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
  };

  it('is named SERVER__TOOL, always needs approval, and calls the server with checked arguments', async () => {
    const calls: unknown[] = [];
    const created = createMcpTool('files', descriptor, async (name, args) => {
      calls.push([name, args]);
      return 'done';
    });
    if (!created.ok) throw new Error(created.reason);
    const { tool } = created;
    expect(tool.name).toBe('files__write');
    expect(tool.description).toBe('Writes. (MCP server "files")');
    expect(tool.approvalMode).toBe(true);
    expect(await tool.needsApproval({ n: 1 }, TOOL_CONTEXT)).toBe(true);
    expect(await tool.execute({ n: 1 }, TOOL_CONTEXT)).toBe('done');
    await expect(tool.execute({ n: 'x' }, TOOL_CONTEXT)).rejects.toThrow('n: must be integer');
    expect(calls).toEqual([['write', { n: 1 }]]);
  });

  it('a tool whose combined name is not a valid tool name is skipped with the reason', () => {
    const created = createMcpTool('files', { ...descriptor, name: 'x'.repeat(60) }, async () => '');
    expect(created).toMatchObject({ ok: false, reason: expect.stringContaining('is not a valid tool name') });
    expect(createMcpTool('files', { ...descriptor, name: 'read.file' }, async () => '').ok).toBe(false);
  });
});

describe('toolResultText', () => {
  it('joins text parts, names the others, and turns isError into a failure', () => {
    expect(
      toolResultText({
        content: [
          { type: 'text', text: 'first' },
          { type: 'image', data: 'AAAA', mimeType: 'image/png' },
          { type: 'resource', resource: { uri: 'file:///a', text: 'inside' } },
        ],
      }),
    ).toEqual({ ok: true, text: 'first\n[image image/png, not shown]\ninside' });
    expect(toolResultText({ content: [], structuredContent: { a: 1 } })).toEqual({
      ok: true,
      text: '{"a":1}',
    });
    expect(toolResultText({ content: [{ type: 'text', text: 'boom' }], isError: true })).toEqual({
      ok: false,
      error: 'boom',
    });
    expect(toolResultText('nonsense').ok).toBe(false);
  });
});
