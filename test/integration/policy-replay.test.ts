import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runPolicyCli } from '../../src/cli/policy-cli.js';
import { createRetentionStore } from '../../src/db/retention-store.js';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';
import { seedApproval } from '../support/audit-seed.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-06-01T12:00:00Z');

const POLICY = {
  tools: {
    create_note: { approvers: ['U0LEAD'] },
    post_message: { rules: [{ when: "args.channel == 'C0SANDBOX'", requireApproval: false }] },
  },
};

describe('npm run policy -- replay FILE', () => {
  let dir: string;
  let dbPath: string;
  let policyFile: string;
  const ids: Record<string, string> = {};

  const cli = async (...argv: string[]) => {
    const run = { code: 0, out: [] as string[], err: [] as string[] };
    run.code = await runPolicyCli(argv, {
      out: (line) => run.out.push(line),
      err: (line) => run.err.push(line),
      now: () => NOW,
      env: { DATABASE_PATH: dbPath, ADMIN_USER_IDS: 'UADMIN' },
    });
    return run;
  };

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'policy-replay-'));
    dbPath = join(dir, 'bot.db');
    policyFile = join(dir, 'policy.json');
    writeFileSync(policyFile, JSON.stringify(POLICY));
    const database = openSqliteDatabase(dbPath);
    ids.note = await seedApproval(database, {
      toolName: 'create_note',
      status: 'executed',
      decidedBy: 'U2',
      createdAt: NOW - 10 * DAY,
      arguments: { text: 'old' },
    });
    ids.sandbox = await seedApproval(database, {
      toolName: 'post_message',
      status: 'executed',
      decidedBy: 'UADMIN',
      createdAt: NOW - 2 * DAY,
      arguments: { channel: 'C0SANDBOX', text: 'hi' },
    });
    ids.nowhere = await seedApproval(database, {
      toolName: 'post_message',
      status: 'pending',
      createdAt: NOW - DAY,
      arguments: { text: 'where?' },
    });
    ids.old = await seedApproval(database, {
      toolName: 'delete_note',
      status: 'rejected',
      decidedBy: 'U3',
      createdAt: NOW - 40 * DAY,
      arguments: { id: 1 },
    });
    await database.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('prints a summary per tool and the differences, over the requests since --since, writing nothing', async () => {
    const events = () => {
      const raw = new Database(dbPath, { readonly: true });
      const n = raw.prepare('select count(*) as n from audit_events').get();
      raw.close();
      return n;
    };
    const before = events();
    const run = await cli('replay', policyFile, '--since', '30d');
    expect(run.err).toEqual([]);
    expect(run.code).toBe(0);
    expect(run.out).toEqual([
      `Replay of 3 approval request(s) against ${policyFile}:`,
      'tool          requests  need approval  no approval  decider refused  differ',
      'create_note   1         1              0            1                1',
      'post_message  2         1              1            0                2',
      '',
      'Differences (3):',
      `  ${ids.note} 2026-05-22T12:00:00.000Z create_note by U1 in T1 (executed): deciders conversation or admins → U0LEAD; U2 would not be allowed to decide`,
      `  ${ids.sandbox} 2026-05-30T12:00:00.000Z post_message by U1 in T1 (executed): would not need approval; rule tool → tools.post_message.rules[0]`,
      `  ${ids.nowhere} 2026-05-31T12:00:00.000Z post_message by U1 in T1 (pending): rule tool → tools.post_message.rules[0] (rule could not be evaluated: No such key: channel)`,
    ]);
    expect(events()).toEqual(before);
  });

  it('--format jsonl gives one object per request for tooling', async () => {
    const run = await cli('replay', policyFile, '--format', 'jsonl');
    expect(run.code).toBe(0);
    const lines = run.out.map((line) => JSON.parse(line));
    expect(lines).toHaveLength(4);
    expect(lines.find((l) => l.approvalId === ids.old)).toMatchObject({
      tool: 'delete_note',
      after: { required: true, approvers: 'admins', quorum: 1, rule: null },
      deciders: [{ userId: 'U3', vote: 'reject', stillAllowed: 'no' }],
      differences: ['U3 would not be allowed to decide'],
    });
    expect(lines.find((l) => l.approvalId === ids.sandbox)).toMatchObject({
      after: { required: false, rule: 'tools.post_message.rules[0]' },
      deciders: [{ userId: 'UADMIN', stillAllowed: 'yes' }],
    });
  });

  it('requests whose arguments retention removed are counted, not replayed as calls without arguments', async () => {
    const database = openSqliteDatabase(dbPath);
    const retention = createRetentionStore({
      db: database,
      clock: { now: () => NOW },
      newId: () => 'unused',
      owner: 'test',
      leaseMs: 60_000,
      ownerIsGone: () => false,
    });
    // Removes the content of the two requests older than 5 days (create_note and delete_note).
    await retention.prune(NOW - 5 * DAY, { at: NOW, limit: 'RETENTION_DAYS=5' });
    await database.close();

    const run = await cli('replay', policyFile, '--since', '30d');
    expect(run.code).toBe(0);
    expect(run.out[0]).toBe(`Replay of 2 approval request(s) against ${policyFile}:`);
    expect(run.out).toContain(
      '1 older request(s) had their arguments removed by retention (RETENTION_DAYS=5) and were not replayed.',
    );
    expect(run.out.join('\n')).not.toContain(ids.note);
    const jsonl = await cli('replay', policyFile, '--format', 'jsonl');
    expect(jsonl.out.map((line) => JSON.parse(line).approvalId).sort()).toEqual(
      [ids.sandbox, ids.nowhere].sort(),
    );
    expect(jsonl.err).toEqual([
      '2 older request(s) had their arguments removed by retention (RETENTION_DAYS=5) and were not replayed.',
    ]);
  });

  it('bad arguments and bad files are told, with exit codes', async () => {
    // No command is a usage problem: the reason and where the usage is, exit 2; asked for, the usage on stdout.
    const none = await cli();
    expect([none.code, none.out, none.err]).toEqual([
      2,
      [],
      ['Name a command: check or replay.\nSee npm run policy -- --help.'],
    ]);
    const unknown = await cli('chek', policyFile);
    expect([unknown.code, unknown.err]).toEqual([
      2,
      ['Unknown command "chek".\nSee npm run policy -- --help.'],
    ]);
    for (const argv of [['help'], ['--help'], ['-h'], ['check', '--help']]) {
      const help = await cli(...argv);
      expect([help.code, help.err, help.out[0]]).toEqual([
        0,
        [],
        expect.stringMatching(/^Usage: npm run policy/),
      ]);
    }
    // A file that is not there is named as the argument it was given as, not as the bot's setting.
    const absent = join(dirname(policyFile), 'absent.json');
    const missing = await cli('check', absent);
    expect(missing.code).toBe(1);
    expect(missing.err[1]).toBe(
      `  - ${absent}: cannot read the file (ENOENT); check the FILE given to npm run policy -- check`,
    );
    expect(missing.err.join('\n')).not.toContain('APPROVAL_POLICY_FILE');
    expect((await cli('replay')).code).toBe(2);
    expect((await cli('replay', policyFile, '--since', 'soon')).err).toEqual([
      '--since must be a span such as 30d, 12h or 2w, or a date such as 2026-05-01',
    ]);
    writeFileSync(policyFile, JSON.stringify({ tools: { create_note: { rules: [{ when: 'nope' }] } } }));
    const bad = await cli('replay', policyFile);
    expect(bad.code).toBe(1);
    expect(bad.err[1]).toMatch(/tools\.create_note\.rules\[0\]\.when: Unknown variable: nope/);
  });
});
