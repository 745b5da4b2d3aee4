import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditEvent } from '../../src/audit/audit-event.js';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import type { FollowIo } from '../../src/cli/audit-tail.js';
import { audit } from '../../src/db/sql/program.js';
import type { SqlDatabase } from '../../src/db/sql/sql-database.js';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';
import { waitUntil } from '../support/wait.js';

describe('npm run audit -- tail', () => {
  let dir: string;
  let db: SqlDatabase;
  const write = (n: number) =>
    db.write(function* () {
      yield* audit(
        Array.from({ length: n }, (_, i) =>
          auditEvent('approval.reminded', { at: Date.now(), payload: { i } }),
        ),
      );
    });
  const run = (argv: string[], extra: Partial<FollowIo> = {}) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = runAuditCli(
      argv,
      { DATABASE_PATH: join(dir, 'bot.db') },
      { out: (l) => out.push(l), err: (l) => err.push(l), now: () => Date.now(), ...extra },
    );
    return { out, err, code };
  };
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'audit-tail-'));
    db = openSqliteDatabase(join(dir, 'bot.db'));
    await write(25);
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('prints the newest events as JSON lines, or every event after a sequence number', async () => {
    const last = run(['tail']);
    expect(await last.code).toBe(0);
    expect(last.out.map((l) => JSON.parse(l).seq)).toEqual([16, 17, 18, 19, 20, 21, 22, 23, 24, 25]);
    const after = run(['tail', '--after', '22']);
    expect(await after.code).toBe(0);
    expect(after.out.map((l) => JSON.parse(l).seq)).toEqual([23, 24, 25]);
    // The same line as `list --format jsonl`.
    const listed = run(['list', '--format', 'jsonl']);
    await listed.code;
    expect(after.out[2]).toBe(listed.out[24]);
  });

  it('--follow prints events as they are written until stopped', async () => {
    const stop = new AbortController();
    const follow = run(['tail', '--lines', '1', '--follow'], { signal: stop.signal, pollMs: 20 });
    await waitUntil(() => follow.out.length === 1);
    await write(3);
    await waitUntil(() => follow.out.length === 4);
    stop.abort();
    expect(await follow.code).toBe(0);
    expect(follow.out.map((l) => JSON.parse(l).seq)).toEqual([25, 26, 27, 28]);
  });

  it('rejects a bad option with the problem and one line pointing at --help, not the whole usage', async () => {
    const bad = run(['tail', '--lines', 'ten']);
    expect(await bad.code).toBe(2);
    const lines = bad.err.join('\n').split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toContain('--lines must be a whole number');
    expect(lines[1]).toBe('See npm run audit -- --help.');
  });
});
