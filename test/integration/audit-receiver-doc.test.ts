import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type ExportRow, formatEvents } from '../../src/audit/audit-export.js';
import { signedBatch } from '../../src/audit/audit-push.js';
import { freePort, REPO_ROOT } from '../support/bot-process.js';
import { waitUntil } from '../support/wait.js';

const SECRET = 'receiver-secret-0123456789';

/** The receiver docs/audit.md shows, exactly as written there. */
function documentedReceiver(): string {
  const doc = readFileSync(join(REPO_ROOT, 'docs', 'audit.md'), 'utf8');
  const found = /<!-- receiver\.mjs -->\n```js\n([\s\S]*?)\n```/.exec(doc);
  if (!found?.[1]) throw new Error('docs/audit.md has no receiver.mjs block');
  return found[1];
}

const event = (seq: number): ExportRow => ({
  seq,
  at: Date.parse('2026-06-01T12:00:00Z'),
  actor: 'U1',
  kind: 'approval.approved',
  teamId: 'T1',
  conversationId: null,
  runId: null,
  approvalId: 'apr_1',
  payload: { reason: 'looks right — ✓' },
  prevHash: '0'.repeat(64),
  hash: String(seq).repeat(64).slice(0, 64),
  tool: 'create_note',
  approvalStatus: 'executed',
});

describe('the receiver in docs/audit.md', () => {
  let child: ChildProcess | undefined;
  let dir: string | undefined;
  afterEach(() => {
    child?.kill();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('accepts what the bot signs, skips repeats, and refuses a wrong signature or an old timestamp', async () => {
    dir = mkdtempSync(join(tmpdir(), 'receiver-'));
    const file = join(dir, 'receiver.mjs');
    writeFileSync(file, documentedReceiver());
    const port = await freePort();
    let out = '';
    child = spawn(process.execPath, [file], {
      env: { PATH: process.env.PATH, AUDIT_WEBHOOK_SECRET: SECRET, PORT: String(port) },
    });
    child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      out += text;
    });
    const post = async (body: string, headers: Record<string, string>) =>
      (await fetch(`http://127.0.0.1:${port}/audit`, { method: 'POST', headers, body })).status;
    const first = signedBatch(formatEvents([event(1), event(2)], 'jsonl'), SECRET, Date.now());
    expect(await waitUntil(() => post(first.body, first.headers).catch(() => 0))).toBe(204);
    const again = signedBatch(formatEvents([event(2), event(3)], 'jsonl'), SECRET, Date.now());
    expect(await post(again.body, again.headers)).toBe(204);
    await waitUntil(() => out.split('\n').filter(Boolean).length === 3);
    expect(
      out
        .split('\n')
        .filter(Boolean)
        .map((l) => JSON.parse(l).seq),
    ).toEqual([1, 2, 3]);

    const forged = signedBatch(formatEvents([event(4)], 'jsonl'), 'another-secret-0123456789', Date.now());
    expect(await post(forged.body, forged.headers)).toBe(401);
    const tampered = signedBatch(formatEvents([event(4)], 'jsonl'), SECRET, Date.now());
    expect(await post(tampered.body.replace('U1', 'U2'), tampered.headers)).toBe(401);
    const old = signedBatch(formatEvents([event(4)], 'jsonl'), SECRET, Date.now() - 600_000);
    expect(await post(old.body, old.headers)).toBe(401);
  });
});
