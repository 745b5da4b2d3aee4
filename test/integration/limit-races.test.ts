import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { limitChecks } from '../../src/approvals/approval-limits.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';
import { createNoteRule, held, newApproval, newThread, pausedState, startedRun } from './store-scenario.js';

const MAX = 2;
const PER_PROCESS = 3;
const DAY = 86_400_000;

/**
 * Three processes, each with its own connection (pool), store turns of one team at the same moment, each asking
 * for a request under a limit of two per team a day: the counting is serialised by the key's lock (PostgreSQL)
 * or the single writer (SQLite), so never more than two are offered, and the rest are refused.
 */
describe.each(DATABASE_KINDS)('approval limits raced by three processes on %s', (kind) => {
  let a: TestStores;
  let processes: TestStores[];
  beforeEach(async () => {
    a = await openTestStores(kind);
    processes = [a, await a.another(), await a.another()];
  });
  afterEach(async () => a.close());

  async function ask(actor: TestStores, teamId: string, callId: string) {
    const run = await startedRun(actor, newThread(teamId));
    const rule = { ...createNoteRule(), limits: [{ per: 'team' as const, max: MAX, windowMs: DAY }] };
    const approval = newApproval(callId, rule);
    const limits = limitChecks(rule, {
      teamId,
      tool: 'create_note',
      place: undefined,
      requesterId: 'U1',
      channelId: 'C1',
    });
    const [stored] = await actor.stores.runs.saveTurn(await held(actor, run.runId), {
      state: pausedState([callId]),
      status: 'running',
      items: [],
      approvals: [{ ...approval, limits }],
      audit: [],
    });
    if (!stored) throw new Error('nothing stored');
    return stored;
  }

  it('never offers more than max requests, and refuses the others with the limit recorded', async () => {
    for (let round = 0; round < 4; round += 1) {
      const teamId = `TRACE${kind}${round}`;
      const stored = await Promise.all(
        processes.flatMap((p, i) =>
          Array.from({ length: PER_PROCESS }, (_, j) => ask(p, teamId, `c${i}_${j}`)),
        ),
      );
      const offered = stored.filter((s) => s.status === 'pending');
      const refused = stored.filter((s) => s.status === 'cancelled');
      expect(offered, `round ${round}`).toHaveLength(MAX);
      expect(refused).toHaveLength(processes.length * PER_PROCESS - MAX);
      for (const r of refused)
        expect(r.rule.limitReached).toMatchObject({ per: 'team', max: MAX, count: MAX });
    }
    // The counts are in the database: a process started later sees them.
    const later = await a.another();
    const after = await ask(later, `TRACE${kind}0`, 'late');
    expect(after.status).toBe('cancelled');
  });
});
