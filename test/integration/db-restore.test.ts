import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { runDbCli } from '../../src/cli/db-cli.js';
import type { SqlDatabase } from '../../src/db/sql/sql-database.js';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';
import { seedApproval } from '../support/audit-seed.js';
import { REPO_ROOT } from '../support/bot-process.js';

const cli = async (argv: string[], env: Record<string, string> = {}) => {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runDbCli(argv, env, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
};

/**
 * Another process with the database open as the bot has it (WAL mode, writing): resolves once it has written,
 * and leaves `-wal` and `-shm` behind when killed, as a crashed bot does.
 */
async function holdDatabase(path: string): Promise<ChildProcess> {
  const script = `import Database from 'better-sqlite3';
const db = new Database(process.argv[1]);
db.pragma('journal_mode = WAL');
db.pragma('wal_autocheckpoint = 0');
db.exec('CREATE TABLE IF NOT EXISTS scratch (x TEXT)');
for (let i = 0; i < 100; i += 1) db.prepare('INSERT INTO scratch VALUES (?)').run('written after the backup');
process.stdout.write('ready\\n');
setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, path], {
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout?.setEncoding('utf8').on('data', (text: string) => {
      if (text.includes('ready')) resolve();
    });
    child.once('exit', (code) => reject(new Error(`the holding process ended (${code})`)));
  });
  return child;
}

/**
 * Whether two files' contents are identical: `toEqual` on buffers of a few hundred kilobytes compares them
 * element by element and takes seconds.
 */
function sameBytes(actual: Buffer, expected: Buffer): boolean {
  return actual.equals(expected);
}

async function kill(child: ChildProcess): Promise<void> {
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

describe('npm run db -- restore: a verified backup in place of a damaged SQLite database', () => {
  let dir: string;
  let dbPath: string;
  let backup: string;
  let head: string;
  let db: SqlDatabase;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'db-restore-'));
    dbPath = join(dir, 'bot.db');
    backup = join(dir, 'backup.db');
    db = openSqliteDatabase(dbPath);
    for (let i = 0; i < 20; i += 1) await seedApproval(db, { arguments: { text: `note ${i}` } });
    const made = await cli(['backup', '--out', backup], { DATABASE_PATH: dbPath });
    expect(made.code, made.err.join('\n')).toBe(0);
    head = /head ([0-9a-f]{64})/.exec(made.out[1] ?? '')?.[1] ?? '';
    expect(head).not.toBe('');
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses while a bot process holds the database, then, once it is gone, moves the damaged files aside and restores', async () => {
    await db.close();
    const bot = await holdDatabase(dbPath);
    let refused: Awaited<ReturnType<typeof cli>>;
    try {
      refused = await cli(['restore', '--from', backup], { DATABASE_PATH: dbPath });
    } finally {
      await kill(bot);
    }
    expect(refused.code).toBe(2);
    expect(refused.err).toEqual([
      `${dbPath} is in use by process ${bot.pid} (the bot?): stop every bot process, then run restore again. Nothing was changed.`,
    ]);
    const database = () =>
      readdirSync(dir)
        .filter((name) => name.startsWith('bot.db'))
        .sort();
    expect(database()).toEqual(['bot.db', 'bot.db-shm', 'bot.db-wal']);

    // What the crash left: the WAL with writes never checkpointed, the shared-memory index, a damaged file.
    writeFileSync(dbPath, Buffer.concat([Buffer.from('damaged'), readFileSync(dbPath).subarray(7)]));
    const damaged = Object.fromEntries(
      ['bot.db', 'bot.db-wal', 'bot.db-shm'].map((name) => [name, readFileSync(join(dir, name))]),
    );
    expect(damaged['bot.db-wal']?.length).toBeGreaterThan(0);

    const run = await cli(['restore', '--from', backup], { DATABASE_PATH: dbPath });
    expect(run.err).toEqual([]);
    expect(run.code).toBe(0);
    const aside = readdirSync(dir).find((name) => name.startsWith('bot.db.damaged-')) ?? '';
    expect(aside).toMatch(/^bot\.db\.damaged-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/);
    expect(run.out).toEqual([
      `Audit chain of the backup: 20 events, intact (head ${head}).`,
      `Moved the damaged database aside to ${join(dir, aside)}: bot.db, bot.db-wal, bot.db-shm.`,
      `Restored ${backup} to ${dbPath} (mode 0600). Start the bot.`,
    ]);
    // Nothing lost: each damaged file kept byte for byte; nothing stale left beside the restored file.
    for (const [name, bytes] of Object.entries(damaged))
      expect(sameBytes(readFileSync(join(dir, aside, name)), bytes), name).toBe(true);
    expect(database()).toEqual(['bot.db', aside]);
    expect(statSync(dbPath).mode & 0o777).toBe(0o600);
    expect(sameBytes(readFileSync(dbPath), readFileSync(backup))).toBe(true);

    const verify: string[] = [];
    const code = await runAuditCli(
      ['verify'],
      { DATABASE_PATH: dbPath },
      { out: (line) => verify.push(line), err: (line) => verify.push(line), now: () => Date.now() },
    );
    expect(code).toBe(0);
    expect(verify[0]).toBe(`20 events, chain intact (head ${head})`);
  });

  it('refuses while this very process has the database open (a bot in the same process or thread)', async () => {
    const run = await cli(['restore', '--from', backup], { DATABASE_PATH: dbPath });
    expect(run.code).toBe(2);
    expect(run.err[0]).toContain(`is in use by process ${process.pid}`);
    expect(existsSync(dbPath)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.includes('damaged'))).toEqual([]);
  });

  it('refuses a backup whose audit chain does not verify, and changes nothing', async () => {
    await db.close();
    const raw = new Database(backup);
    raw.exec('DROP TRIGGER IF EXISTS audit_events_no_update; DROP TRIGGER IF EXISTS audit_events_no_delete;');
    raw.exec(`UPDATE audit_events SET actor = 'U_FORGED' WHERE seq = 3`);
    raw.close();
    const before = readFileSync(dbPath);
    const run = await cli(['restore', '--from', backup], { DATABASE_PATH: dbPath });
    expect(run.code).toBe(1);
    expect(run.err[0]).toMatch(
      /^The backup's audit chain is broken at event 3: .+\. Not restored; nothing was changed \(choose another backup\)\.$/,
    );
    expect(sameBytes(readFileSync(dbPath), before)).toBe(true);
    expect(readdirSync(dir).filter((name) => name.includes('damaged'))).toEqual([]);
  });

  it('refuses on PostgreSQL with a pointer to pg_restore, and needs --from', async () => {
    const pg = await cli(['restore', '--from', backup], {
      DATABASE_URL: 'postgres://bot:secret@db.example.com/bot',
    });
    expect(pg.code).toBe(2);
    expect(pg.err[0]).toMatch(/^The database is PostgreSQL \(DATABASE_URL\): restore a pg_dump file/);
    expect(pg.err[0]).toContain('pg_restore --no-owner');
    const missing = await cli(['restore'], { DATABASE_PATH: dbPath });
    expect(missing.code).toBe(2);
    expect(missing.err).toEqual([
      'restore needs --from FILE (a backup written by npm run db -- backup). See npm run db -- --help.',
    ]);
  });
});
