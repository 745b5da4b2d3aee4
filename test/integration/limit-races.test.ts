import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ApprovalRule } from '../../src/approvals/approval.js';
import { limitChecks } from '../../src/approvals/approval-limits.js';
import { rows } from '../e2e/db-rows.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';
import { createNoteRule, held, newApproval, newThread, pausedState, startedRun } from './store-scenario.js';

const MAX = 2;
const PER_PROCESS = 3;
const DAY = 86_400_000;

/** Stores a turn of `teamId` asking for one request under `rule`'s limits; resolves with the stored request. */
async function askUnder(actor: TestStores, rule: ApprovalRule, teamId: string, callId: string) {
  const run = await startedRun(actor, newThread(teamId));
  const facts = { teamId, tool: 'create_note', place: undefined, requesterId: 'U1', channelId: 'C1' };
  const [stored] = await actor.stores.runs.saveTurn(await held(actor, run.runId), {
    state: pausedState([callId]),
    status: 'running',
    items: [],
    approvals: [{ ...newApproval(callId, rule), limits: limitChecks(rule, facts) }],
    audit: [],
  });
  if (!stored) throw new Error('nothing stored');
  return stored;
}

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

  const rule = { ...createNoteRule(), limits: [{ per: 'team' as const, max: MAX, windowMs: DAY }] };
  const ask = (actor: TestStores, teamId: string, callId: string) => askUnder(actor, rule, teamId, callId);

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

describe.each(DATABASE_KINDS)('approval limits over time on %s', (kind) => {
  const clock = { at: Date.now(), now: () => clock.at };
  let s: TestStores;
  beforeEach(async () => {
    clock.at = Date.now();
    s = await openTestStores(kind, { clock });
  });
  afterEach(async () => s.close());

  it('keeps a window of uses per key: older ones are forgotten as the next request is counted', async () => {
    const rule = {
      ...createNoteRule(),
      limits: [
        { per: 'team' as const, max: 2, windowMs: DAY },
        { per: 'team' as const, max: 1, windowMs: DAY / 24 },
      ],
    };
    const ask = async (callId: string) => (await askUnder(s, rule, 'TWINDOW', callId)).status;
    const uses = async () =>
      (await rows(s.fresh.config, 'select at from approval_limit_uses order by at')).map((u) => Number(u.at));
    const start = clock.now();
    expect(await ask('a')).toBe('pending');
    expect(await ask('b')).toBe('cancelled');
    clock.at += DAY / 24 + 1;
    expect(await ask('c')).toBe('pending');
    // A day's window still counts the first: the uses are kept whole within the longest window.
    expect(await uses()).toEqual([start, start + DAY / 24 + 1]);
    clock.at = start + DAY + 1;
    expect(await ask('d')).toBe('pending');
    expect(await uses()).toEqual([start + DAY / 24 + 1, start + DAY + 1]);
  });
});
