import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditEvent } from '../../src/audit/audit-event.js';
import { verifyChain } from '../../src/audit/verify-chain.js';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { toStoredEvent } from '../../src/db/audit-log-store.js';
import { audit, count } from '../../src/db/sql/program.js';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';
import { REPO_ROOT } from '../support/bot-process.js';

type FixtureRow = Record<string, string | number | null>;

/** Frozen: never regenerated. Written before events carried an organisation, and after. */
const fixture = (name: string) =>
  JSON.parse(readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'audit-chain', name), 'utf8')) as FixtureRow[];
const V2_EVENTS = fixture('v2-events.json');
const V2_ENTERPRISE_EVENTS = fixture('v2-enterprise-events.json');

describe('audit events carry the Enterprise Grid organisation', () => {
  let dir: string;
  let dbPath: string;

  const cli = async (...argv: string[]) => {
    const run = { code: 0, out: [] as string[], err: [] as string[] };
    run.code = await runAuditCli(
      argv,
      { DATABASE_PATH: dbPath },
      { out: (line) => run.out.push(line), err: (line) => run.err.push(line), now: () => Date.now() },
    );
    return run;
  };

  /** Writes frozen rows as they were stored (a row without `enterprise_id` was written before the column). */
  const insert = async (events: FixtureRow[]) => {
    const database = openSqliteDatabase(dbPath);
    await database.write(function* () {
      for (const e of events)
        yield* count(sql`insert into audit_events (seq, at, actor, kind, team_id, enterprise_id,
            conversation_id, run_id, approval_id, payload, prev_hash, hash, chain_version, payload_digest)
          values (${e.seq}, ${e.at}, ${e.actor}, ${e.kind}, ${e.team_id}, ${e.enterprise_id ?? null},
            ${e.conversation_id}, ${e.run_id}, ${e.approval_id}, ${e.payload}, ${e.prev_hash}, ${e.hash},
            ${e.chain_version}, ${e.payload_digest})`);
    });
    await database.close();
  };

  /** Opens the file as an attacker would: plain SQLite, the append-only triggers dropped. */
  const tamper = (statement: string) => {
    const raw = new Database(dbPath);
    raw.exec('DROP TRIGGER IF EXISTS audit_events_no_update; DROP TRIGGER IF EXISTS audit_events_no_delete;');
    raw.exec(statement);
    raw.close();
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'audit-enterprise-'));
    dbPath = join(dir, 'bot.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('events written before the organisation was recorded still verify, and so do those that carry it', async () => {
    expect(V2_EVENTS.every((e) => !('enterprise_id' in e))).toBe(true);
    expect(verifyChain(V2_EVENTS.map(toStoredEvent))).toMatchObject({ ok: true, count: 4 });
    // The same four events, then three of a shared channel's request in T2 of organisation E1.
    expect(V2_ENTERPRISE_EVENTS.slice(0, 4).map((e) => e.hash)).toEqual(V2_EVENTS.map((e) => e.hash));
    expect(verifyChain(V2_ENTERPRISE_EVENTS.map(toStoredEvent))).toMatchObject({ ok: true, count: 7 });
    await insert(V2_ENTERPRISE_EVENTS);
    // New events chain on after the frozen ones, with and without an organisation.
    const database = openSqliteDatabase(dbPath);
    await database.write(function* () {
      yield* audit([
        auditEvent('run.started', { at: Date.now(), actor: 'W3', teamId: 'T3', enterpriseId: 'E1' }),
        auditEvent('run.started', { at: Date.now(), actor: 'U4', teamId: 'T4' }),
      ]);
    });
    await database.close();
    const verify = await cli('verify');
    expect(verify.err).toEqual([]);
    expect(verify.code).toBe(0);
  });

  it('list and export show the organisation, and --enterprise keeps only its events', async () => {
    await insert(V2_ENTERPRISE_EVENTS);
    const all = await cli('list', '--format', 'jsonl');
    expect(all.out.map((line) => JSON.parse(line).enterprise)).toEqual(['', '', '', '', 'E1', 'E1', 'E1']);
    const grid = await cli('list', '--format', 'jsonl', '--enterprise', 'E1');
    expect(grid.out.map((line) => JSON.parse(line).seq)).toEqual([5, 6, 7]);
    expect((await cli('list', '--format', 'jsonl', '--enterprise', 'E2')).out).toEqual([]);
    const csv = await cli('list', '--format', 'csv', '--enterprise', 'E1');
    expect(csv.out[1]).toMatch(/^5,[^,]+,W2,run.started,T2,E1,conv_grid,run_grid,/);
    const bad = await cli('list', '--enterprise', 'T1');
    expect(bad.code).toBe(2);
    expect(bad.err.join('\n')).toContain('--enterprise must be an Enterprise Grid ID');
  });

  it('an organisation changed, removed or added on a stored event fails verify, naming it', async () => {
    for (const [statement, seq] of [
      ["update audit_events set enterprise_id = 'E2' where seq = 6", 6],
      ['update audit_events set enterprise_id = null where seq = 5', 5],
      ["update audit_events set enterprise_id = 'E1' where seq = 2", 2],
    ] as const) {
      rmSync(dbPath, { force: true });
      rmSync(`${dbPath}-wal`, { force: true });
      rmSync(`${dbPath}-shm`, { force: true });
      await insert(V2_ENTERPRISE_EVENTS);
      expect((await cli('verify')).code).toBe(0);
      tamper(statement);
      const verify = await cli('verify');
      expect(verify.code).toBe(1);
      expect(verify.err.join('\n')).toContain(`event ${seq} was edited`);
    }
  });
});
