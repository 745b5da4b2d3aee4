import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { REPO_ROOT, runBotProcessToExit, TSX_LOADER } from '../support/bot-process.js';
import { reply } from '../support/fake-openai.js';
import { waitUntil } from '../support/wait.js';
import { type Harness, startHarness } from './harness.js';

const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'mcp-server.ts');

interface Files {
  dir: string;
  config: string;
  records: string;
  pid: string;
}

const dirs: string[] = [];

/** An MCP servers file with the fixture server as `records`, plus any extra servers. */
function serversFile(extra: Record<string, unknown> = {}): Files {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-e2e-'));
  dirs.push(dir);
  const files = {
    dir,
    config: join(dir, 'mcp.json'),
    records: join(dir, 'records.json'),
    pid: join(dir, 'pid'),
  };
  const records = {
    command: process.execPath,
    args: ['--import', TSX_LOADER, FIXTURE],
    env: { RECORDS_FILE: files.records, PID_FILE: files.pid },
  };
  writeFileSync(files.config, JSON.stringify({ mcpServers: { records, ...extra } }));
  return files;
}

async function health(h: Harness): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(h.url.replace('/slack/events', '/healthz'));
  const body: unknown = await response.json();
  if (body === null || typeof body !== 'object') throw new Error('healthz body is not an object');
  return { status: response.status, body: { ...body } };
}

describe('MCP servers: their tools, under the same approval policy', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  it('a server tool reaches the model as SERVER__TOOL with its schema, needs approval, and runs once approved', async () => {
    const files = serversFile();
    h = await startHarness({ env: { MCP_SERVERS_FILE: files.config, HEALTHZ_DETAILS: 'true' } });
    h.model.enqueue(
      reply.toolCalls([{ name: 'records__write_record', arguments: { id: 1, text: 'hello' } }]),
      reply.text('Saved it.'),
    );
    await h.mention('save record 1 saying hello');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(JSON.stringify(card.params.blocks)).toContain('records__write_record');
    const tool = h.model.requests[0]?.tools?.find((t) => t.function?.name === 'records__write_record');
    expect(tool?.function?.parameters).toMatchObject({
      type: 'object',
      properties: { id: { type: 'integer' }, text: { type: 'string' } },
      required: ['id', 'text'],
    });
    expect(tool?.function?.parameters).not.toHaveProperty('$schema');
    expect(existsSync(files.records)).toBe(false);

    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Saved it.');
    expect(h.model.requests[1]?.messages.find((m) => m.role === 'tool')?.content).toBe('Saved record 1.');
    expect(JSON.parse(readFileSync(files.records, 'utf8'))).toEqual({ 1: 'hello' });
  });

  it('arguments the server schema refuses still need approval, and never reach the server', async () => {
    const files = serversFile();
    h = await startHarness({ env: { MCP_SERVERS_FILE: files.config, HEALTHZ_DETAILS: 'true' } });
    h.model.enqueue(
      reply.toolCalls([{ name: 'records__write_record', arguments: { id: 'one', text: 'x' } }]),
      reply.text('That did not work.'),
    );
    await h.mention('save record one');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'That did not work.');
    expect(h.model.requests[1]?.messages.find((m) => m.role === 'tool')?.content).toBe(
      'The arguments are invalid: id: must be integer.',
    );
    expect(existsSync(files.records)).toBe(false);
  });

  it('a policy file rule naming an MCP tool lets it run without approval', async () => {
    const files = serversFile();
    writeFileSync(files.records, JSON.stringify({ 3: 'three' }));
    const policyFile = join(files.dir, 'policy.json');
    writeFileSync(
      policyFile,
      JSON.stringify({ tools: { records__read_record: { requireApproval: false } } }),
    );
    h = await startHarness({ env: { MCP_SERVERS_FILE: files.config, APPROVAL_POLICY_FILE: policyFile } });
    h.model.enqueue(
      reply.toolCalls([{ name: 'records__read_record', arguments: { id: 3 } }]),
      reply.text('Record 3 says three.'),
    );
    await h.mention('what is record 3?');
    await h.waitForText((text) => text === 'Record 3 says three.');
    expect(h.cards()).toHaveLength(0);
    expect(h.model.requests[1]?.messages.find((m) => m.role === 'tool')?.content).toBe('Record 3: three');
  });

  it('a server that fails to start is reported in /healthz; the bot runs with the other servers', async () => {
    const files = serversFile({ broken: { command: process.execPath, args: ['-e', 'process.exit(3)'] } });
    h = await startHarness({ env: { MCP_SERVERS_FILE: files.config, HEALTHZ_DETAILS: 'true' } });
    const { status, body } = await health(h);
    expect(status).toBe(200);
    expect(body.mcp).toMatchObject({
      records: {
        state: 'connected',
        tools: ['records__read_record', 'records__write_record', 'records__list_entries'],
      },
      broken: { state: 'failed' },
    });
    expect(h.logs.join('\n')).toContain('MCP server failed to start');
    h.model.enqueue(reply.text('hi'));
    await h.mention('hello');
    await h.waitForText((text) => text === 'hi');
    const names = h.model.requests[0]?.tools?.map((t) => t.function?.name);
    expect(names).toContain('records__read_record');
    expect(names?.some((name) => name?.startsWith('broken__'))).toBe(false);
  });

  it('a server that drops: its tools are withdrawn and a pending approval fails closed', async () => {
    const files = serversFile();
    h = await startHarness({ env: { MCP_SERVERS_FILE: files.config, HEALTHZ_DETAILS: 'true' } });
    const harness = h;
    h.model.enqueue(reply.toolCalls([{ name: 'records__write_record', arguments: { id: 2, text: 'two' } }]));
    await h.mention('save record 2');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');

    process.kill(Number(readFileSync(files.pid, 'utf8')), 'SIGKILL');
    await waitUntil(async () => {
      const { body } = await health(harness);
      return JSON.stringify(body.mcp).includes('"disconnected"');
    });
    expect(h.logs.join('\n')).toContain('MCP server disconnected; its tools were withdrawn');

    await h.click(card, 'approve', 'U2');
    const told = await h.waitForText((text) => text.startsWith('I cannot resume this run'));
    expect(told).toBe(
      'I cannot resume this run: The tool records__write_record is no longer available. Nothing was executed.',
    );
    expect(existsSync(files.records)).toBe(false);
    expect(h.model.requests).toHaveLength(1);
  });

  it('an invalid servers file stops npm start with exit code 1, naming the place of each problem', async () => {
    const files = serversFile({
      tickets: { url: 'mcp.example.com', header: {} },
      'bad name': { command: 'x' },
    });
    const policy = join(files.dir, 'policy.json');
    writeFileSync(policy, JSON.stringify({ tools: { delete_notes: {} } }));
    const result = await runBotProcessToExit({
      env: {
        SLACK_BOT_TOKEN: 'xoxb-test',
        SLACK_SIGNING_SECRET: 'secret',
        OPENAI_API_KEY: 'sk-test',
        DATABASE_PATH: join(files.dir, 'bot.db'),
        MCP_SERVERS_FILE: files.config,
        APPROVAL_POLICY_FILE: policy,
      },
    });
    expect(result.code).toBe(1);
    // The policy file's problems too, in the same run.
    expect(result.stderr).toContain('tools.delete_notes: unknown tool "delete_notes"');
    expect(result.stderr).toContain(`MCP_SERVERS_FILE ${files.config} is invalid:`);
    expect(result.stderr).toContain('mcpServers.tickets.url: must be an http:// or https:// URL');
    expect(result.stderr).toContain('mcpServers.tickets: Unrecognized key: "header"');
    expect(result.stderr).toContain('mcpServers.bad name: server names use letters');
    // One message for people: no error class name, no stack trace.
    expect(result.stderr).not.toContain('AppError');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
