import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { historyItemSchema } from '../../src/agent/history.js';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { REPO_ROOT, TSX_LOADER } from '../support/bot-process.js';
import { reply } from '../support/fake-openai.js';
import { rows } from './db-rows.js';
import { type Harness, startHarness } from './harness.js';

const FIXTURE = join(REPO_ROOT, 'test', 'fixtures', 'mcp-server.ts');
const ADMIN = 'UADMIN';
const TWO_MB = 2_000_000;

/** The listing the fixture's `list_entries` returns for `chars`, computed here the same way. */
function listing(chars: number): string {
  const lines: string[] = [];
  let length = 0;
  for (let n = 1; length < chars; n += 1) {
    lines.push(`entry ${n}`);
    length += `entry ${n}`.length + 1;
  }
  return lines.join('\n').slice(0, chars);
}

describe('a tool output longer than TOOL_OUTPUT_MAX_CHARS', () => {
  let h: Harness | undefined;
  let dir: string | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a 2 MB MCP listing reaches the model cut, with a note; admins read it whole in the audit export and /approvals show says where', async () => {
    dir = mkdtempSync(join(tmpdir(), 'tool-output-'));
    const servers = join(dir, 'mcp.json');
    const records = { command: process.execPath, args: ['--import', TSX_LOADER, FIXTURE] };
    writeFileSync(servers, JSON.stringify({ mcpServers: { records } }));
    h = await startHarness({ env: { MCP_SERVERS_FILE: servers, ADMIN_USER_IDS: ADMIN } });
    h.model.enqueue(
      reply.toolCalls([{ name: 'records__list_entries', arguments: { chars: TWO_MB } }]),
      reply.text('There are many entries.'),
    );
    await h.mention('list every entry');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'There are many entries.');

    const full = listing(TWO_MB);
    const sent = h.model.requests[1]?.messages.find((m) => m.role === 'tool')?.content;
    if (typeof sent !== 'string') throw new Error('no tool message in the second model request');
    expect(sent.length).toBeLessThanOrEqual(16_000);
    const [head = '', note, ...tail] = sent.split('\n[output cut: ');
    expect(tail).toEqual([]);
    expect(full.startsWith(head)).toBe(true);
    expect(head.length).toBeGreaterThan(13_000);
    const noteLine = `[output cut: ${note?.split('\n')[0]}`;
    const shownTail = note?.split('\n').slice(1).join('\n') ?? '';
    expect(full.endsWith(shownTail)).toBe(true);
    expect(shownTail.length).toBeGreaterThan(1_500);
    const hidden = TWO_MB - head.length - shownTail.length;
    expect(noteLine).toBe(
      `[output cut: ${hidden.toLocaleString('en-US')} of 2,000,000 characters not shown; call the tool again with narrower arguments to see more]`,
    );

    // The stored conversation holds what the model read; the audit log holds the whole output once.
    const outputs = (await rows(h.database, "select data from conversation_items where kind = 'tool_output'"))
      .map((row) => historyItemSchema.parse({ kind: 'tool_output', data: JSON.parse(String(row.data)) }))
      .map((item) => (item.kind === 'tool_output' ? item.data.output : ''));
    expect(outputs).toEqual([sent]);
    const [approval] = await rows(h.database, 'select id, result from approvals');
    expect(approval?.result).toBe(sent);

    const out = join(dir, 'outputs.jsonl');
    const cli = { out: () => undefined, err: () => undefined, now: () => Date.now() };
    const code = await runAuditCli(
      ['export', '--tool', 'records__list_entries', '--out', out],
      { DATABASE_PATH: h.dbPath },
      cli,
    );
    expect(code).toBe(0);
    const exported = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { kind: string; seq: number; payload: Record<string, unknown> });
    const finished = exported.find((event) => event.kind === 'tool.finished');
    expect(finished?.payload).toMatchObject({ totalChars: TWO_MB, hiddenChars: hidden, ok: true });
    expect(finished?.payload.result === full).toBe(true);

    const shown = await h.approvals(`show ${String(approval?.id)}`, ADMIN);
    expect(JSON.stringify(shown.params.blocks)).toContain(
      `the whole output, 2,000,000 characters, is in audit event #${finished?.seq}`,
    );
  }, 60_000);
});
