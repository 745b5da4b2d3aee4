import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initialRunState } from '../../src/agent/run-state.js';
import { auditEvent } from '../../src/audit/audit-event.js';
import { verifyChain } from '../../src/audit/verify-chain.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';
import { createNoteRule, newThread, pausedRun, startedRun, vote } from './store-scenario.js';

const ROUNDS = 12;

/**
 * Two processes on one database, each with its own connection (pool) and lease owner, racing on every
 * read-then-write the stores make. On PostgreSQL at READ COMMITTED these hold only by row locks, the chain's
 * head lock and the unique index on active runs; on SQLite by its single writer.
 */
describe.each(DATABASE_KINDS)('races between two processes on %s', (kind) => {
  const clock = { at: Date.now(), now: () => clock.at };
  let a: TestStores;
  let b: TestStores;
  beforeEach(async () => {
    clock.at = Date.now();
    a = await openTestStores(kind, { clock });
    b = await a.another({ clock });
  });
  afterEach(async () => a.close());

  it('the last two votes of a turn, cast at once in two processes, claim the run exactly once', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const { approvals, runId } = await pausedRun(a, ['c1', 'c2']);
      const [first, second] = approvals;
      if (!first || !second) throw new Error('two approvals expected');
      const results = await Promise.all([vote(a, first, 'U2'), vote(b, second, 'U3')]);
      const claims = results.filter((r) => r.kind === 'decided' && r.runClaimed);
      expect(claims, `round ${round}`).toHaveLength(1);
      expect((await a.stores.runs.getRun(runId))?.status).toBe('running');
    }
  });

  it('racing approvals of one request never exceed its quorum and decide it once', async () => {
    for (let round = 0; round < ROUNDS / 2; round += 1) {
      const { approvals } = await pausedRun(a, ['c1'], { ...createNoteRule(), quorum: 3 });
      const [approval] = approvals;
      if (!approval) throw new Error('no approval');
      const voters = ['U1', 'U2', 'U3', 'U4', 'U5', 'U6'];
      const results = await Promise.all(voters.map((user, i) => vote(i % 2 ? a : b, approval, user)));
      expect(results.filter((r) => r.kind === 'decided')).toHaveLength(1);
      expect(results.filter((r) => r.kind === 'counted')).toHaveLength(2);
      expect(await a.stores.approvals.approvers(approval.id)).toHaveLength(3);
    }
  });

  it('two messages reaching two processes at once: one starts the run, the other is queued', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const thread = newThread();
      const conversationId = await a.stores.conversations.findOrCreate(thread, 'slack');
      const start = (s: TestStores, n: number) =>
        s.stores.conversations.startRunOrQueue({
          conversationId,
          runId: `run_${round}_${n}`,
          message: { ...thread, userId: 'U1', text: `m${n}`, messageTs: `${n}.0` },
          state: initialRunState(),
          audit: [auditEvent('run.started', { at: clock.now(), runId: `run_${round}_${n}` })],
        });
      const results = await Promise.all([start(a, 1), start(b, 2)]);
      expect(results.sort()).toEqual(['queued', 'started']);
    }
  });

  it('a dead process’s runs are taken over once, however many processes recover at the same moment', async () => {
    const runs = await Promise.all(Array.from({ length: ROUNDS }, () => startedRun(a)));
    clock.at += 30_001;
    const c = await a.another({ clock });
    const claimed = await Promise.all(
      [b, c].map((s) => s.stores.recovery.claimAbandonedRuns({ surface: 'slack' })),
    );
    const ids = claimed.flat().map((run) => run.runId);
    expect(ids.sort()).toEqual(runs.map((run) => run.runId).sort());
  });

  it('a decision and an expiry racing on one request: one of them settles it and the run is claimed once', async () => {
    for (let round = 0; round < ROUNDS; round += 1) {
      const rule = { ...createNoteRule(), expiresAfterMs: 1000 };
      const { approvals } = await pausedRun(a, ['c1'], rule, clock.now());
      const [approval] = approvals;
      if (!approval) throw new Error('no approval');
      const at = clock.now() + 1000;
      const [decision, expired] = await Promise.all([
        vote(a, approval, 'U2'),
        b.stores.timers.expireDue(at, 'slack', () => []),
      ]);
      const mine = expired.filter((e) => e.approval.id === approval.id);
      const settledByVote = decision.kind === 'decided';
      expect(Number(settledByVote) + mine.length, `round ${round}`).toBe(1);
      const claims = Number(settledByVote && decision.runClaimed) + mine.filter((e) => e.runClaimed).length;
      expect(claims).toBe(1);
    }
  });

  it('owed deliveries are taken by one process each', async () => {
    const paused = await Promise.all(Array.from({ length: 6 }, () => pausedRun(a, ['c1', 'c2'])));
    clock.at += 60_000;
    const taken = await Promise.all(
      [a, b].map((s) => s.stores.deliveries.takeDue({ surface: 'slack' }, clock.now())),
    );
    const ids = taken.flat().flatMap((d) => (d.kind === 'card' ? [d.approval.id] : []));
    expect(ids.sort()).toEqual(paused.flatMap((p) => p.approvals.map((x) => x.id)).sort());
  });

  it('audit events appended from two processes at once form one linear chain', async () => {
    const append = (s: TestStores, n: number) =>
      s.stores.approvals.recordAudit([
        auditEvent('policy.loaded', { at: clock.now(), payload: { n } }),
        auditEvent('policy.loaded', { at: clock.now(), payload: { n, second: true } }),
      ]);
    await Promise.all(Array.from({ length: 40 }, (_, n) => append(n % 2 ? a : b, n)));
    const chain = await a.stores.auditQueries.chain();
    expect(chain.map((e) => e.seq)).toEqual(Array.from({ length: 80 }, (_, i) => i + 1));
    expect(verifyChain(chain)).toMatchObject({ ok: true, count: 80 });
  });
});
