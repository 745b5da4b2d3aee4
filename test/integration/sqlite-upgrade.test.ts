import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';
import { rows } from '../e2e/db-rows.js';
import { REPO_ROOT } from '../support/bot-process.js';

/** The migrations released before several processes could share a database (0000–0004). */
const RELEASED = 5;

describe('a SQLite file from the last release', () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bot-upgrade-'));
    path = join(dir, 'bot.db');
    // The file as the last release left it: its migrations applied by drizzle's own migrator.
    const released = join(dir, 'migrations');
    cpSync(join(REPO_ROOT, 'drizzle', 'sqlite'), released, { recursive: true });
    const journal = join(released, 'meta', '_journal.json');
    const entries: unknown[] = JSON.parse(readFileSync(journal, 'utf8')).entries;
    writeFileSync(
      journal,
      JSON.stringify({ version: '7', dialect: 'sqlite', entries: entries.slice(0, RELEASED) }),
    );
    const sqlite = new Database(path);
    migrate(drizzle(sqlite), { migrationsFolder: released });
    const now = Date.now();
    sqlite.exec(`
      INSERT INTO conversations (id, team_id, channel_id, thread_ts, created_at)
        VALUES ('conv_slack', 'T1', 'C1', '1.0', ${now}), ('conv_terminal', 'local', 'terminal', 'demo', ${now});
      INSERT INTO runs (id, conversation_id, status, state, schema_version, turn, requester_id, pending_reply,
          created_at, updated_at)
        VALUES ('run_owed', 'conv_slack', 'completed', '{}', 1, 1, 'U1', 'The answer Slack refused.', ${now}, ${now});
      INSERT INTO approvals (id, run_id, conversation_id, team_id, turn, call_id, tool_name, arguments,
          arguments_hash, status, requester_id, rule, channel_id, thread_ts, created_at, updated_at)
        VALUES ('apr_cardless', 'run_owed', 'conv_slack', 'T1', 1, 'c1', 'create_note', '{}', 'x', 'pending',
          'U1', '{}', 'C1', '1.0', ${now}, ${now});
    `);
    sqlite.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is upgraded in place: what it owed Slack is still owed, and terminal threads are told apart by a column', async () => {
    const upgraded = openSqliteDatabase(path);
    await upgraded.close();
    expect(await rows(path, 'select id, surface from conversations order by id')).toEqual([
      { id: 'conv_slack', surface: 'slack' },
      { id: 'conv_terminal', surface: 'terminal' },
    ]);
    expect(
      await rows(path, 'select id, kind, run_id, approval_id, text from deliveries order by id'),
    ).toEqual([
      { id: 'card:apr_cardless', kind: 'card', run_id: 'run_owed', approval_id: 'apr_cardless', text: null },
      {
        id: 'reply:run_owed',
        kind: 'reply',
        run_id: 'run_owed',
        approval_id: null,
        text: 'The answer Slack refused.',
      },
    ]);
    const columns = (await rows(path, "select name from pragma_table_info('runs')")).map((c) => c.name);
    expect(columns).toEqual(expect.arrayContaining(['lease_owner', 'lease_token', 'lease_until']));
    expect(columns).not.toContain('pending_reply');
    const journal = JSON.parse(
      readFileSync(join(REPO_ROOT, 'drizzle', 'sqlite', 'meta', '_journal.json'), 'utf8'),
    );
    expect(await rows(path, 'select count(*) as n from __drizzle_migrations')).toEqual([
      { n: journal.entries.length },
    ]);
    // Opening again applies nothing twice.
    await openSqliteDatabase(path).close();
    expect(await rows(path, 'select count(*) as n from __drizzle_migrations')).toEqual([
      { n: journal.entries.length },
    ]);
  });
});

describe("a SQLite file's append-only guards", () => {
  let dir: string;
  let path: string;
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'bot-guards-'));
    path = join(dir, 'bot.db');
    await openSqliteDatabase(path).close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));
  const guards = () =>
    rows(
      path,
      "select name, sql from sqlite_master where type = 'trigger' and name like 'audit_events_no_%' order by name",
    );
  const schemaVersion = async () => (await rows(path, 'pragma schema_version'))[0]?.schema_version;

  it('are left as they are when they are current, and put back or replaced when dropped or from before retention', async () => {
    const current = await guards();
    expect(current.map((g) => g.name)).toEqual(['audit_events_no_delete', 'audit_events_no_update']);
    const version = await schemaVersion();
    await openSqliteDatabase(path).close();
    expect(await schemaVersion()).toBe(version);

    const raw = new Database(path);
    raw.exec(`DROP TRIGGER audit_events_no_delete; DROP TRIGGER audit_events_no_update;
      CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
      BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;`);
    raw.close();
    await openSqliteDatabase(path).close();
    expect(await guards()).toEqual(current);
  });
});
