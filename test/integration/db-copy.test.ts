import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { auditEvent } from '../../src/audit/audit-event.js';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { runDbCli } from '../../src/cli/db-cli.js';
import { createNotesStore } from '../../src/db/notes-store.js';
import { audit } from '../../src/db/sql/program.js';
import { randomId } from '../../src/ids.js';
import { rows } from '../e2e/db-rows.js';
import { runEvents } from '../support/audit-seed.js';
import {
  type FreshDatabase,
  freshDatabase,
  openFresh,
  openTestStores,
  type TestStores,
} from '../support/test-database.js';
import { pausedRun, vote } from './store-scenario.js';

const io = () => {
  const out: string[] = [];
  const err: string[] = [];
  return {
    out,
    err,
    io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l), now: () => Date.now() },
  };
};

describe('npm run db -- copy: SQLite into PostgreSQL', () => {
  let source: TestStores;
  let target: FreshDatabase;
  beforeEach(async () => {
    source = await openTestStores('sqlite');
    target = await freshDatabase('postgres');
  });
  afterEach(async () => {
    await source.close();
    await target.drop();
  });

  /** A database with every kind of row: runs, history, approvals, votes, grants, notes, the audit chain. */
  async function populate() {
    const { approvals } = await pausedRun(source, ['c1', 'c2']);
    const [first, second] = approvals;
    if (!first || !second) throw new Error('two approvals expected');
    await vote(source, first, 'U2');
    await source.stores.approvals.vote({
      approvalId: second.id,
      userId: 'U3',
      vote: 'approve',
      reason: null,
      standing: true,
      editedArguments: null,
      audit: [],
    });
    await source.stores.notes.create('T1', 'first', 'U1');
    await source.stores.notes.create('T1', 'second', 'U1');
    await source.stores.dedupe.claim(['event:1']);
    await source.stores.greetings.claim('T1', 'U1', Date.now());
    await source.stores.homeViewers.remember({ teamId: 'T1', userId: 'U1', auditor: true }, Date.now());
    // A run's end and an expiry, which the daily totals count.
    await source.db.write(function* () {
      yield* audit([
        ...runEvents('run_ended', {
          user: 'U1',
          tools: ['create_note'],
          prompt: 3,
          completion: 4,
          at: Date.now(),
        }),
        auditEvent('approval.expired', { at: Date.now(), teamId: 'T1', payload: {} }),
      ]);
    });
  }

  const verify = async (env: Record<string, string>) => {
    const result = io();
    const code = await runAuditCli(['verify'], env, result.io);
    return { code, line: result.out.join('\n') };
  };

  it('copies every row; the audit chain verifies with the same head on both; ids go on after the copied ones', async () => {
    await populate();
    const path = source.fresh.config.kind === 'sqlite' ? source.fresh.config.path : '';
    await source.db.close();
    const copy = io();
    const code = await runDbCli(['copy', '--from', path, '--to', target.env.DATABASE_URL ?? ''], {}, copy.io);
    expect(copy.err).toEqual([]);
    expect(code).toBe(0);
    expect(copy.out.join('\n')).toMatch(/audit_events: \d+/);

    const before = await verify({ DATABASE_PATH: path });
    const after = await verify({ DATABASE_URL: target.env.DATABASE_URL ?? '' });
    expect(before.code).toBe(0);
    expect(after).toEqual(before);
    for (const table of [
      'conversations',
      'conversation_items',
      'runs',
      'approvals',
      'approval_votes',
      'standing_approvals',
      'notes',
      'deliveries',
      'processed_events',
      'greeted_users',
      'home_viewers',
    ]) {
      const count = `select count(*) as n from ${table}`;
      expect(await rows(target.config, count), table).toEqual(await rows(path, count));
    }
    // Not copied: the target's triggers count the copied rows again, to the same totals.
    for (const totals of [
      `select team_id, day, tool_name, status, requests from approval_days where requests <> 0
        order by team_id, day, tool_name, status`,
      `select team_id, day, tool_name, bucket, decided from approval_wait_days where decided <> 0
        order by team_id, day, tool_name, bucket`,
      'select team_id, day, kind, events from deadline_days order by team_id, day, kind',
      `select team_id, day, series, series_key, runs, unrecorded, prompt_tokens, completion_tokens
        from run_usage_days order by team_id, day, series, series_key`,
    ])
      expect(await rows(target.config, totals), totals).toEqual(await rows(path, totals));
    for (const table of ['approval_days', 'approval_wait_days', 'deadline_days', 'run_usage_days'])
      expect(await rows(path, `select * from ${table}`), table).not.toEqual([]);
    const copied = await openFresh(target);
    const notes = createNotesStore({
      db: copied,
      clock: { now: () => Date.now() },
      newId: randomId,
      owner: 'after-the-copy',
      leaseMs: 30_000,
      ownerIsGone: () => false,
    });
    expect((await notes.create('T1', 'third', 'U1')).id).toBe(3);
    expect((await notes.list('T1')).map((n) => n.id)).toEqual([1, 2, 3]);
    await copied.close();
  });

  it('refuses a target that already holds data, and a target that is not a PostgreSQL URL', async () => {
    await populate();
    const path = source.fresh.config.kind === 'sqlite' ? source.fresh.config.path : '';
    await source.db.close();
    const url = target.env.DATABASE_URL ?? '';
    expect(await runDbCli(['copy', '--from', path, '--to', url], {}, io().io)).toBe(0);
    const again = io();
    expect(await runDbCli(['copy', '--from', path, '--to', url], {}, again.io)).toBe(1);
    expect(again.err.join('\n')).toContain('already holds data');
    const wrong = io();
    expect(await runDbCli(['copy', '--from', path, '--to', 'mysql://x'], {}, wrong.io)).toBe(2);
    expect(wrong.err.join('\n')).toContain('PostgreSQL URL');
  });
});
