import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { initialRunState } from '../../src/agent/run-state.js';
import { droppedEvent, dropRemovedWorkspace } from '../../src/conversations/dropped-deliveries.js';
import { rows } from '../e2e/db-rows.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';
import { held, newThread, pausedRun, startedRun } from './store-scenario.js';

/** What the outbox owes a workspace the app was removed from is dropped, the same on SQLite and PostgreSQL. */
describe.each(DATABASE_KINDS)('dropped deliveries on %s', (kind) => {
  const clock = { at: Date.now(), now: () => clock.at };
  let s: TestStores;
  beforeEach(async () => {
    clock.at = Date.now();
    s = await openTestStores(kind, { clock, leaseMs: 30_000 });
  });
  afterEach(async () => s.close());

  /** A run of `teamId`'s that ended owing its reply. */
  const endedOwingReply = async (teamId: string) => {
    const { runId, conversationId } = await startedRun(s, newThread(teamId));
    await s.stores.runs.saveTurn(await held(s, runId), {
      state: { ...initialRunState(), turn: 1 },
      status: 'completed',
      items: [],
      approvals: [],
      audit: [],
      reply: `The answer of ${teamId}.`,
    });
    return { runId, conversationId };
  };
  const owed = async () =>
    (await rows(s.fresh.config, 'select id from deliveries order by id')).map((row) => String(row.id));
  const droppedEvents = () =>
    rows(
      s.fresh.config,
      "select team_id, run_id, approval_id, payload from audit_events where kind = 'delivery.dropped' order by seq",
    );

  it("a removed workspace's deliveries are dropped, audited; another workspace's stay owed", async () => {
    const { approvals } = await pausedRun(s, ['c1', 'c2']);
    const t2 = await endedOwingReply('T2');
    expect(await owed()).toHaveLength(3);
    expect(await dropRemovedWorkspace(s.stores.deliveries, { teamId: 'T1' }, clock.now())).toBe(2);
    expect(await owed()).toEqual([`reply:${t2.runId}`]);
    const events = await droppedEvents();
    const byApproval = (x: unknown[], y: unknown[]) => String(x[1]).localeCompare(String(y[1]));
    expect(
      events.map((e) => [e.team_id, e.approval_id, JSON.parse(String(e.payload))]).sort(byApproval),
    ).toEqual(
      approvals
        .map((a) => ['T1', a.id, { kind: 'card', attempts: 0, reason: 'app_removed' }])
        .sort(byApproval),
    );
    expect(await dropRemovedWorkspace(s.stores.deliveries, { teamId: 'T1' }, clock.now())).toBe(0);
    expect(await droppedEvents()).toHaveLength(2);
  });

  it('a delivery refused for a removed workspace is dropped by the process that holds it, and only by it', async () => {
    const t2 = await endedOwingReply('T2');
    clock.at += 30_001;
    const other = await s.another({ clock, leaseMs: 30_000 });
    const [reply] = await other.stores.deliveries.takeDue({ conversationId: t2.conversationId }, clock.now());
    if (!reply) throw new Error('the reply is owed');
    // Not this process's to drop: it does not hold it.
    await s.stores.deliveries.dropped(reply, [droppedEvent(reply, clock.now())]);
    expect(await owed()).toEqual([`reply:${t2.runId}`]);
    expect(await droppedEvents()).toEqual([]);
    await other.stores.deliveries.dropped(reply, [droppedEvent(reply, clock.now())]);
    expect(await owed()).toEqual([]);
    expect(await droppedEvents()).toEqual([
      {
        team_id: 'T2',
        run_id: t2.runId,
        approval_id: null,
        payload: JSON.stringify({ kind: 'reply', attempts: 0, reason: 'app_removed' }),
      },
    ]);
  });
});
