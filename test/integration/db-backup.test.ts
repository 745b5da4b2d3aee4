import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyChain } from '../../src/audit/verify-chain.js';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { runDbCli } from '../../src/cli/db-cli.js';
import { createAuditQueryStore } from '../../src/db/audit-query-store.js';
import type { SqlDatabase } from '../../src/db/sql/sql-database.js';
import { openSqliteDatabase, openSqliteReadOnly } from '../../src/db/sqlite/sqlite-database.js';
import { seedApproval } from '../support/audit-seed.js';

const cli = async (argv: string[], env: Record<string, string> = {}) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runDbCli(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
};

async function auditEvents(db: SqlDatabase): Promise<number> {
  const verdict = verifyChain(await createAuditQueryStore(db).chain());
  if (!verdict.ok) throw new Error(verdict.message);
  return verdict.count;
}

describe('npm run db -- backup: a consistent SQLite copy while the bot writes', () => {
  let dir: string;
  let dbPath: string;
  let db: SqlDatabase;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'db-backup-'));
    dbPath = join(dir, 'bot.db');
    db = openSqliteDatabase(dbPath);
    for (let i = 0; i < 200; i += 1) await seedApproval(db, { arguments: { text: `note ${i}` } });
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('backs up during writes: the copy opens, its audit chain verifies, and it can be restored', async () => {
    const before = await auditEvents(db);
    // Another connection keeps writing requests and their audit events while the backup runs.
    let writing = true;
    let written = 0;
    const writer = (async () => {
      while (writing) {
        await seedApproval(db, { arguments: { text: `during ${written}` } });
        written += 1;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const out = join(dir, 'backup.db');
    const run = await cli(['backup', '--out', out], { DATABASE_PATH: dbPath });
    writing = false;
    await writer;
    expect(run.err).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.out[0]).toMatch(
      new RegExp(`^Backed up SQLite ${dbPath} to ${out} \\(\\d+ pages, a consistent snapshot\\)\\.$`),
    );
    expect(run.out[1]).toMatch(/^Audit chain of the copy: \d+ events, intact \(head [0-9a-f]{64}\)\.$/);
    expect(written).toBeGreaterThan(0);
    expect(statSync(out).mode & 0o777).toBe(0o600);

    const copy = openSqliteReadOnly(out);
    const copied = await auditEvents(copy);
    await copy.close();
    expect(copied).toBeGreaterThanOrEqual(before);
    expect(copied).toBeLessThanOrEqual(await auditEvents(db));

    // Restore, as docs/operations.md says: the copy in place of DATABASE_PATH opens as the bot's database.
    const restored = openSqliteDatabase(out);
    expect(await auditEvents(restored)).toBe(copied);
    await restored.close();
    const verify: string[] = [];
    const code = await runAuditCli(
      ['verify'],
      { DATABASE_PATH: out },
      {
        out: (line) => verify.push(line),
        err: (line) => verify.push(line),
        now: () => Date.now(),
      },
    );
    expect(code).toBe(0);
    expect(verify[0]).toMatch(new RegExp(`^${copied} events, chain intact`));
  });

  it('never overwrites a file, and needs --out', async () => {
    const taken = join(dir, 'taken.db');
    writeFileSync(taken, 'keep me');
    const refused = await cli(['backup', '--out', taken], { DATABASE_PATH: dbPath });
    expect(refused.code).toBe(2);
    expect(refused.err[0]).toBe(
      `${taken} exists already: choose a new file name (a backup never overwrites a file).`,
    );
    const self = await cli(['backup', '--out', dbPath, '--from', dbPath]);
    expect(self.code).toBe(2);
    expect(self.err[0]).toContain('is the database itself');
    const missing = await cli(['backup'], { DATABASE_PATH: dbPath });
    expect(missing.code).toBe(2);
    expect(missing.err[0]).toContain('backup needs --out FILE');
    const folder = await cli(['backup', '--out', join(dir, 'none', 'b.db')], { DATABASE_PATH: dbPath });
    expect(folder.err[0]).toContain('does not exist');
  });

  it('--help, -h and help print the usage; a usage problem prints the reason and one line pointing at --help', async () => {
    for (const argv of [['--help'], ['-h'], ['help'], ['backup', '--help'], ['restore', '-h']]) {
      const help = await cli(argv);
      expect([help.code, help.err, help.out[0]]).toEqual([
        0,
        [],
        expect.stringMatching(/^Usage: npm run db -- backup/),
      ]);
    }
    for (const [argv, reason] of [
      [[], 'Name a command: backup, restore, copy, rotate-token-key or admins.'],
      [['frobnicate'], 'Unknown command: frobnicate'],
      [
        ['backup', '--nope'],
        "Unknown option '--nope'. To specify a positional argument starting with a '-', place it at the end of the command after '--', as in '-- \"--nope\"",
      ],
      [
        ['copy', '--to', 'mysql://x'],
        'copy needs --to with a PostgreSQL URL such as postgres://bot:secret@db.example.com/bot',
      ],
    ] as const) {
      const run = await cli([...argv], { DATABASE_PATH: dbPath });
      expect(run.code).toBe(2);
      expect(run.err.join('\n').split('\n')).toEqual([reason, 'See npm run db -- --help.']);
    }
  });

  it('on PostgreSQL it points to pg_dump and pg_restore instead', async () => {
    const run = await cli(['backup', '--out', join(dir, 'b.db')], {
      DATABASE_URL: 'postgres://bot:secret@db.example.com/bot',
    });
    expect(run.code).toBe(2);
    expect(run.err[0]).toMatch(
      /^The database is PostgreSQL \(DATABASE_URL\): back it up with PostgreSQL's own tools/,
    );
    expect(run.err[0]).toContain('pg_dump --format=custom');
    expect(run.err[0]).toContain('pg_restore');
  });
});
