import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AuditInput, auditEvent } from '../../src/audit/audit-event.js';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { audit } from '../../src/db/sql/program.js';
import type { SqlDatabase } from '../../src/db/sql/sql-database.js';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';
import { buildStatsReport } from '../../src/slack/blocks/approvals-report.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';

const DAY = 86_400_000;
const NOW = Date.parse('2026-06-01T12:00:00Z');

/** A run as the bot records it: started by `user`, the tools it called, completed with its usage. */
function run(
  id: string,
  {
    user,
    team = 'T1',
    tools = [],
    prompt,
    completion,
    at = NOW - DAY,
  }: {
    user: string;
    team?: string;
    tools?: string[];
    prompt?: number;
    completion?: number;
    at?: number;
  },
): AuditInput[] {
  const scope = { teamId: team, conversationId: `conv_${id}`, runId: id };
  return [
    auditEvent('run.started', { at, actor: user, ...scope, payload: { channelId: 'C1' } }),
    ...tools.map((tool) => auditEvent('tool.finished', { at, ...scope, payload: { tool, ok: true } })),
    auditEvent('run.completed', {
      at: at + 1000,
      ...scope,
      payload:
        prompt === undefined
          ? { turns: 1, usage: { promptTokens: '[redacted]' } }
          : { turns: 1, usage: { promptTokens: prompt, completionTokens: completion, totalTokens: 0 } },
    }),
  ];
}

/** A run that ended early (stopped, or failed at a limit): its usage so far is recorded with its end. */
function endedEarly(id: string, kind: 'run.cancelled' | 'run.failed', prompt: number): AuditInput[] {
  const scope = { teamId: 'T1', conversationId: `conv_${id}`, runId: id };
  return [
    auditEvent('run.started', { at: NOW - DAY, actor: 'U1', ...scope, payload: { channelId: 'C1' } }),
    auditEvent(kind, {
      at: NOW - DAY + 1000,
      ...scope,
      payload: {
        reason: 'stopped by <@U1>',
        usage: { promptTokens: prompt, completionTokens: 0, totalTokens: prompt },
      },
    }),
  ];
}

const RUNS = [
  ...run('run_a', { user: 'U1', tools: ['create_note'], prompt: 1000, completion: 100 }),
  ...run('run_b', {
    user: 'U1',
    tools: ['create_note', 'delete_note', 'create_note'],
    prompt: 2000,
    completion: 200,
  }),
  ...run('run_c', { user: 'U2', team: 'T2', prompt: 500, completion: 50 }),
  // Written before usage was kept: redacted by mistake then, counted as a run without usage.
  ...run('run_d', { user: 'U2' }),
  // Out of the window.
  ...run('run_old', { user: 'U1', prompt: 9999, completion: 9999, at: NOW - 60 * DAY }),
];

async function seed(db: SqlDatabase): Promise<void> {
  await db.write(function* () {
    yield* audit(RUNS);
  });
}

describe.each(DATABASE_KINDS)('token usage in /approvals stats, on %s', (kind) => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores(kind);
    await seed(t.db);
  });
  afterEach(async () => t.close());

  it('sums the tokens of the workspace’s runs completed in the window', async () => {
    const stats = await t.stores.auditQueries.stats('T1', NOW - 30 * DAY);
    expect(stats.usage).toEqual({
      runs: 3,
      unrecorded: 1,
      promptTokens: 3000,
      completionTokens: 300,
      totalTokens: 3300,
    });
    const report = JSON.stringify(buildStatsReport(stats, undefined).blocks);
    expect(report).toContain(
      'Model tokens: *3,300* (3,000 prompt + 300 completion) over 3 finished runs (1 without recorded usage)',
    );
    expect((await t.stores.auditQueries.stats('T2')).usage.totalTokens).toBe(550);
  });

  it('counts the tokens of runs that were stopped or failed, not only of those that completed', async () => {
    await t.db.write(function* () {
      yield* audit([
        ...endedEarly('run_stopped', 'run.cancelled', 400),
        ...endedEarly('run_limit', 'run.failed', 50),
        // Ended before their usage was recorded with the end: not runs of the report.
        auditEvent('run.failed', {
          at: NOW - DAY,
          teamId: 'T1',
          conversationId: 'conv_x',
          runId: 'run_x',
          payload: { reason: 'the model server is down' },
        }),
      ]);
    });
    const stats = await t.stores.auditQueries.stats('T1', NOW - 30 * DAY);
    expect(stats.usage).toEqual({
      runs: 5,
      unrecorded: 1,
      promptTokens: 3450,
      completionTokens: 300,
      totalTokens: 3750,
    });
    expect(JSON.stringify(buildStatsReport(stats, undefined).blocks)).toContain('over 5 finished runs');
  });
});

describe('npm run audit -- usage', () => {
  let dir: string;
  let db: SqlDatabase;
  const cli = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAuditCli(
      argv,
      { DATABASE_PATH: join(dir, 'bot.db') },
      { out: (l) => out.push(l), err: (l) => err.push(l), now: () => NOW },
    );
    return { code, out, err };
  };
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'audit-usage-'));
    db = openSqliteDatabase(join(dir, 'bot.db'));
    await seed(db);
  });
  afterEach(async () => {
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('by user (the default, over 30 days), by tool and by team', async () => {
    const byUser = await cli('usage', '--since', '30d', '--by', 'user');
    expect(byUser.code).toBe(0);
    expect(byUser.out).toEqual([
      'user  runs  prompt  completion  total',
      'U1       2   3,000         300  3,300',
      'U2       2     500          50    550',
      'all      4   3,500         350  3,850',
      '1 of 4 runs have no recorded usage (counted as 0 tokens).',
    ]);
    expect((await cli('usage')).out).toEqual(byUser.out);
    const byTool = await cli('usage', '--by', 'tool', '--format', 'jsonl');
    expect(byTool.out.map((l) => JSON.parse(l))).toEqual([
      {
        tool: 'create_note',
        runs: 2,
        unrecorded: 0,
        promptTokens: 3000,
        completionTokens: 300,
        totalTokens: 3300,
      },
      {
        tool: 'delete_note',
        runs: 1,
        unrecorded: 0,
        promptTokens: 2000,
        completionTokens: 200,
        totalTokens: 2200,
      },
      {
        tool: '(no tool)',
        runs: 2,
        unrecorded: 1,
        promptTokens: 500,
        completionTokens: 50,
        totalTokens: 550,
      },
    ]);
    const byTeam = await cli('usage', '--by', 'team', '--since', '90d');
    expect(byTeam.out.slice(1, 3)).toEqual([
      'T1       4  12,999      10,299  23,298',
      'T2       1     500          50     550',
    ]);
  });

  it('explains a bad option', async () => {
    const bad = await cli('usage', '--by', 'channel');
    expect(bad.code).toBe(2);
    expect(bad.err[0]).toContain('--by must be user, tool or team');
  });
});
