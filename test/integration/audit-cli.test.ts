import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditEvent } from '../../src/audit/audit-event.js';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';
import { seedApproval, seedAuditEvents } from '../support/audit-seed.js';
import { REPO_ROOT } from '../support/bot-process.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-06-01T12:00:00Z');

interface CliRun {
  code: number;
  out: string[];
  err: string[];
}

describe('npm run audit: verify, list, export', () => {
  let dir: string;
  let dbPath: string;

  const cli = async (...argv: string[]): Promise<CliRun> => {
    const run: CliRun = { code: 0, out: [], err: [] };
    run.code = await runAuditCli(
      argv,
      { DATABASE_PATH: dbPath },
      {
        out: (line) => run.out.push(line),
        err: (line) => run.err.push(line),
        now: () => NOW,
      },
    );
    return run;
  };

  /** Opens the file as an attacker would: plain SQLite, the append-only triggers dropped. */
  const tamper = (statements: string[]) => {
    const raw = new Database(dbPath);
    raw.exec('DROP TRIGGER IF EXISTS audit_events_no_update; DROP TRIGGER IF EXISTS audit_events_no_delete;');
    for (const statement of statements) raw.exec(statement);
    raw.close();
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'audit-cli-'));
    dbPath = join(dir, 'bot.db');
    const database = openSqliteDatabase(dbPath);
    // seq 1, 2: an approved create_note ten days ago
    await seedApproval(database, {
      status: 'executed',
      decidedBy: 'U2',
      createdAt: NOW - 10 * DAY,
      arguments: { text: 'old' },
    });
    // seq 3, 4: a rejected delete_note yesterday
    await seedApproval(database, {
      toolName: 'delete_note',
      arguments: { id: 4 },
      status: 'rejected',
      decidedBy: 'U99',
      createdAt: NOW - DAY,
    });
    // seq 5: a pending post_message in another workspace
    await seedApproval(database, {
      teamId: 'T22',
      toolName: 'post_message',
      arguments: { channel: 'C9', text: 'hi' },
      requesterId: 'U33',
      createdAt: NOW - 3_600_000,
    });
    await database.close();
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('verify: an untouched log is intact, and reading it changes nothing in the file', async () => {
    const before = readFileSync(dbPath);
    const run = await cli('verify');
    expect(run.code).toBe(0);
    expect(run.out[0]).toMatch(/^5 events, chain intact \(head [0-9a-f]{64}\)$/);
    expect(readFileSync(dbPath).equals(before)).toBe(true);
  });

  it('verify: an edited event is named', async () => {
    tamper([`UPDATE audit_events SET payload = '{"id":5,"tool":"delete_note"}' WHERE seq = 3`]);
    const run = await cli('verify');
    expect(run.code).toBe(1);
    expect(run.err.join('\n')).toContain('event 3 was edited');
  });

  it('verify: an edited event whose hash was recomputed is still named', async () => {
    tamper([`UPDATE audit_events SET actor = 'U7', hash = '${'a'.repeat(64)}' WHERE seq = 2`]);
    const run = await cli('verify');
    expect(run.code).toBe(1);
    expect(run.err.join('\n')).toContain('event 2 was edited');
  });

  it('verify: a deleted event is named', async () => {
    tamper(['DELETE FROM audit_events WHERE seq = 3']);
    const run = await cli('verify');
    expect(run.code).toBe(1);
    expect(run.err.join('\n')).toContain('event 3 was deleted');
  });

  it('verify: a deletion hidden by renumbering the later events is named', async () => {
    tamper(['DELETE FROM audit_events WHERE seq = 3', 'UPDATE audit_events SET seq = seq - 1 WHERE seq > 3']);
    const run = await cli('verify');
    expect(run.code).toBe(1);
    expect(run.err.join('\n')).toMatch(/an event before event 3 was deleted/);
  });

  it('verify: reordered events are named', async () => {
    tamper([
      'UPDATE audit_events SET seq = -1 WHERE seq = 3',
      'UPDATE audit_events SET seq = 3 WHERE seq = 4',
      'UPDATE audit_events SET seq = 4 WHERE seq = -1',
    ]);
    const run = await cli('verify');
    expect(run.code).toBe(1);
    expect(run.err.join('\n')).toContain('event 3 was reordered');
  });

  it('the database itself refuses to update or delete audit events', async () => {
    const raw = new Database(dbPath);
    expect(() => raw.exec(`UPDATE audit_events SET actor = 'U7' WHERE seq = 1`)).toThrow(/append-only/);
    expect(() => raw.exec('DELETE FROM audit_events WHERE seq = 1')).toThrow(/append-only/);
    raw.close();
    expect((await cli('verify')).code).toBe(0);
  });

  it('list: filters by tool, status, user, team and time', async () => {
    const seqs = async (...filters: string[]) =>
      (await cli('list', '--format', 'jsonl', ...filters)).out.map((line) => JSON.parse(line).seq);
    expect(await seqs()).toEqual([1, 2, 3, 4, 5]);
    expect(await seqs('--tool', 'delete_note')).toEqual([3, 4]);
    expect(await seqs('--status', 'pending')).toEqual([5]);
    expect(await seqs('--status', 'executed')).toEqual([1, 2]);
    expect(await seqs('--user', 'U99')).toEqual([4]);
    expect(await seqs('--user', 'U33')).toEqual([5]);
    expect(await seqs('--team', 'T22')).toEqual([5]);
    expect(await seqs('--since', '7d')).toEqual([3, 4, 5]);
    expect(await seqs('--since', '2d', '--until', '2h')).toEqual([3, 4]);
    expect(await seqs('--until', '2026-05-25')).toEqual([1, 2]);
    // A bare date as --until is the whole day: events of May 31 (12:00 and 12:01) are in.
    expect(await seqs('--until', '2026-05-31')).toEqual([1, 2, 3, 4]);
    expect(await seqs('--since', '2026-05-31', '--until', '2026-05-31')).toEqual([3, 4]);
    expect(await seqs('--until', '2026-05-31T12:00:30Z')).toEqual([1, 2, 3]);
  });

  it('list: terminal users and the local workspace are accepted as filters', async () => {
    const database = openSqliteDatabase(dbPath);
    // seq 6: a request made in `npm run chat -- --user alice`
    await seedApproval(database, { teamId: 'local', requesterId: 'alice', createdAt: NOW });
    await database.close();
    const alice = await cli('list', '--format', 'jsonl', '--user', 'alice', '--team', 'local');
    expect(alice.err).toEqual([]);
    expect(alice.code).toBe(0);
    expect(alice.out.map((line) => JSON.parse(line).seq)).toEqual([6]);
    const local = await cli('list', '--format', 'jsonl', '--team', 'local');
    expect(local.out.map((line) => JSON.parse(line).team)).toEqual(['local']);
    const bad = await cli('list', '--team', 'somewhere');
    expect(bad.code).toBe(2);
    expect(bad.err.join('\n')).toContain('--team must be a Slack team ID such as T012ABCDEF, or local');
    const badUser = await cli('list', '--user', 'al ice');
    expect(badUser.code).toBe(2);
    expect(badUser.err.join('\n')).toContain('--user must be a Slack user ID');
  });

  it('list: table and csv formats', async () => {
    const table = await cli('list', '--tool', 'delete_note');
    expect(table.code).toBe(0);
    expect(table.out[0]).toMatch(/^seq\s+time\s+actor\s+kind\s+tool\s+status/);
    expect(table.out[2]).toMatch(
      /^4\s+2026-05-31T12:01:00.000Z\s+U99\s+approval.rejected\s+delete_note\s+rejected/,
    );
    expect(table.out.at(-1)).toBe('2 events');
    const csv = (await cli('list', '--format', 'csv', '--status', 'pending')).out;
    expect(csv[0]).toBe(
      'seq,time,actor,kind,team,enterprise,conversation,run,approval,tool,status,payload,prev_hash,hash',
    );
    expect(csv[1]).toMatch(/^5,2026-06-01T11:00:00.000Z,U33,approval.requested,T22,/);
  });

  it('export: writes the filtered events to a file, CSV cells that start a formula neutralised', async () => {
    const database = openSqliteDatabase(dbPath);
    await seedApproval(database, {
      toolName: '=HYPERLINK("http://x.test")',
      requesterId: 'U55',
      createdAt: NOW,
    });
    await database.close();
    const out = join(dir, 'audit.csv');
    const run = await cli('export', '--out', out, '--user', 'U55');
    expect(run.code).toBe(0);
    expect(run.out[0]).toBe(`Wrote 1 events to ${out} (csv)`);
    const lines = readFileSync(out, 'utf8').trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(`,"'=HYPERLINK(""http://x.test"")",pending,`);
    expect(lines[1]).not.toMatch(/,=HYPERLINK/);

    const jsonl = join(dir, 'audit.jsonl');
    expect((await cli('export', '--out', jsonl, '--tool', 'delete_note')).code).toBe(0);
    const events = readFileSync(jsonl, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events.map((e) => e.kind)).toEqual(['approval.requested', 'approval.rejected']);
    // JSON types: the sequence number is a number (CSV keeps its text cell), and the log still verifies.
    expect(events.map((e) => e.seq)).toEqual([3, 4]);
    expect(lines[1]).toMatch(/^6,/);
    expect((await cli('verify')).code).toBe(0);
    expect(events[0].payload).toEqual({ tool: 'delete_note', arguments: { id: 4 } });
  });

  it('verify and export read a long log a page at a time: every event once, in order, and an edit deep in it named', async () => {
    const events = Array.from({ length: 4_500 }, (_, i) =>
      auditEvent('run.completed', {
        at: NOW - DAY + i,
        teamId: 'T1',
        runId: `run_${i}`,
        payload: { turns: i },
      }),
    );
    await seedAuditEvents({ kind: 'sqlite', path: dbPath }, events);
    expect((await cli('verify')).out.join('\n')).toContain('4505 events, chain intact');
    const out = join(dir, 'all.jsonl');
    expect((await cli('export', '--out', out)).out).toEqual([`Wrote 4505 events to ${out} (jsonl)`]);
    const seqs = readFileSync(out, 'utf8')
      .trim()
      .split('\n')
      .map((line) => (JSON.parse(line) as { seq: number }).seq);
    expect(seqs).toEqual(Array.from({ length: 4_505 }, (_, i) => i + 1));
    // One day's filter over pages: the day's 4,500 events and the request seeded that day, no other.
    const csv = join(dir, 'day.csv');
    const day = await cli('export', '--out', csv, '--since', '2026-05-31', '--until', '2026-05-31');
    const lines = readFileSync(csv, 'utf8').trim().split('\n').slice(1);
    expect(day.out).toEqual([`Wrote ${lines.length} events to ${csv} (csv)`]);
    expect(lines.length).toBeGreaterThan(4_500);
    expect(lines.length).toBeLessThan(4_505);
    tamper([`UPDATE audit_events SET actor = 'U666' WHERE seq = 4321`]);
    const run = await cli('verify');
    expect(run.code).toBe(1);
    expect(run.err.join('\n')).toContain('event 4321 was edited');
  });

  it('usage problems exit 2 with the reason and one line pointing at --help; --help, -h and help print the usage', async () => {
    for (const [argv, reason] of [
      [[], 'No command given.'],
      [['frobnicate'], 'Unknown command: frobnicate'],
      [
        ['list', '--since', 'yesterday'],
        '--since must be a span such as 7d, 12h, 30m or a date such as 2026-05-01',
      ],
      [['list', '--status', 'maybe'], undefined],
      [['export'], 'export needs --out FILE'],
      [['prune'], 'prune needs --before with a span such as 90d or a past date such as 2026-03-01'],
    ] as const) {
      const run = await cli(...argv);
      expect(run.code).toBe(2);
      const lines = run.err.join('\n').split('\n');
      expect(lines).toHaveLength(2);
      if (reason) expect(lines[0]).toBe(reason);
      expect(lines[1]).toBe('See npm run audit -- --help.');
    }
    for (const argv of [['--help'], ['-h'], ['help'], ['list', '--help']]) {
      const help = await cli(...argv);
      expect([help.code, help.err, help.out[0]]).toEqual([
        0,
        [],
        expect.stringMatching(/^Usage: npm run audit/),
      ]);
    }
    const missing = await runAuditCli(
      ['verify'],
      { DATABASE_PATH: join(dir, 'none.db') },
      {
        out: () => {},
        err: () => {},
        now: () => NOW,
      },
    );
    expect(missing).toBe(2);
    const empty = join(dir, 'empty.db');
    new Database(empty).close();
    const errors: string[] = [];
    const notOurs = await runAuditCli(
      ['verify'],
      { DATABASE_PATH: empty },
      {
        out: () => {},
        err: (line) => errors.push(line),
        now: () => NOW,
      },
    );
    expect(notOurs).toBe(2);
    expect(errors.join('\n')).toContain('has no audit log');
  });

  it('piped into a reader that stops early (| head -1), list exits 0 without an error', async () => {
    const database = openSqliteDatabase(dbPath);
    // Far more than a pipe buffer holds, so the command is still writing when the reader goes away.
    for (let i = 0; i < 600; i += 1)
      await seedApproval(database, { arguments: { text: 'x'.repeat(400) }, createdAt: NOW - i });
    await database.close();
    const child = spawn(process.execPath, [join(REPO_ROOT, 'dist', 'cli', 'audit.js'), 'list'], {
      cwd: dir,
      env: { PATH: process.env.PATH, DATABASE_PATH: dbPath },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (text: string) => {
      stderr += text;
    });
    // Like `head -1`: read the first chunk, then close the pipe.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((done) => child.once('close', (c) => done(c)));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('runs as a command: verify exits 0, then 1 after tampering, without Slack or model settings', () => {
    // The compiled command (the tests' global setup builds dist/), as `npm run audit` runs the same code.
    const run = () =>
      spawnSync(process.execPath, [join(REPO_ROOT, 'dist', 'cli', 'audit.js'), 'verify'], {
        cwd: dir,
        env: { PATH: process.env.PATH, DATABASE_PATH: dbPath },
        encoding: 'utf8',
        timeout: 20_000,
      });
    const intact = run();
    expect(intact.stdout, intact.stderr).toMatch(/^5 events, chain intact/);
    expect(intact.status).toBe(0);
    tamper(['DELETE FROM audit_events WHERE seq = 2']);
    const broken = run();
    expect(broken.status).toBe(1);
    expect(broken.stderr).toContain('event 2 was deleted');
  });
});
