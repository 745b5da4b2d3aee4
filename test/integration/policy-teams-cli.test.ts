import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runPolicyCli } from '../../src/cli/policy-cli.js';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';
import { seedApproval } from '../support/audit-seed.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-06-01T12:00:00Z');

/** Notes need U0LEAD everywhere, except in T2SALES where they need nobody and deletions need two people. */
const POLICY = {
  tools: { create_note: { approvers: ['U0LEAD'] } },
  teams: {
    T2SALES: {
      tools: {
        create_note: { requireApproval: false },
        delete_note: { approvers: ['U0LEAD', 'U0DEPUTY'], quorum: 2 },
      },
    },
  },
};

describe('npm run policy with a section per workspace', () => {
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
    dir = mkdtempSync(join(tmpdir(), 'policy-teams-'));
    dbPath = join(dir, 'bot.db');
    policyFile = join(dir, 'policy.json');
    writeFileSync(policyFile, JSON.stringify(POLICY));
    const database = openSqliteDatabase(dbPath);
    for (const teamId of ['T1ENG', 'T2SALES']) {
      ids[`note ${teamId}`] = await seedApproval(database, {
        teamId,
        toolName: 'create_note',
        status: 'executed',
        decidedBy: 'U2',
        createdAt: NOW - 3 * DAY,
      });
      ids[`delete ${teamId}`] = await seedApproval(database, {
        teamId,
        toolName: 'delete_note',
        status: 'executed',
        decidedBy: 'UADMIN',
        createdAt: NOW - 2 * DAY,
        arguments: { id: 1 },
      });
    }
    await database.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('replays each past request under the rules of its own workspace', async () => {
    const run = await cli('replay', policyFile, '--format', 'jsonl');
    expect(run.code).toBe(0);
    const byId = new Map(run.out.map((line) => JSON.parse(line)).map((r) => [r.approvalId, r]));
    expect(byId.get(ids['note T1ENG'])).toMatchObject({
      teamId: 'T1ENG',
      after: { required: true, approvers: 'U0LEAD', quorum: 1 },
      differences: ['deciders conversation or admins → U0LEAD', 'U2 would not be allowed to decide'],
    });
    expect(byId.get(ids['note T2SALES'])).toMatchObject({
      teamId: 'T2SALES',
      after: { required: false },
      differences: ['would not need approval'],
    });
    expect(byId.get(ids['delete T1ENG'])).toMatchObject({ differences: [] });
    expect(byId.get(ids['delete T2SALES'])).toMatchObject({
      after: { required: true, approvers: 'U0LEAD or U0DEPUTY', quorum: 2 },
      deciders: [{ userId: 'UADMIN', stillAllowed: 'no' }],
    });
    const table = await cli('replay', policyFile);
    expect(table.out).toContain(
      `  ${ids['note T2SALES']} 2026-05-29T12:00:00.000Z create_note by U1 in T2SALES (executed): would not need approval`,
    );
  });

  it("check prints the file's own summary, then what differs in each workspace", async () => {
    const run = await cli('check', policyFile);
    expect(run.code).toBe(0);
    const [own, sales, ...rest] = run.out;
    expect(rest).toEqual([]);
    expect(own).toMatch(
      new RegExp(`^Approval policy \\(${policyFile}\\): create_note: U0LEAD; delete_note: admins`),
    );
    expect(sales).toBe(
      'Team T2SALES: create_note: no approval; delete_note: U0LEAD or U0DEPUTY, 2 approvals, no self-approval, no standing approval',
    );
  });
});
