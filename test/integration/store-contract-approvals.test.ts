import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bucketWait, waitBucket } from '../../src/approvals/wait-buckets.js';
import { auditEvent } from '../../src/audit/audit-event.js';
import { verifyChain } from '../../src/audit/verify-chain.js';
import { seedApproval } from '../support/audit-seed.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';
import { createNoteRule, pausedRun, vote } from './store-scenario.js';

/**
 * Every method of the approval-side ports (approvals, cards, deadlines, standing approvals, audit queries) and
 * of the small stores does the same on SQLite and on PostgreSQL.
 */
describe.each(DATABASE_KINDS)('approval stores on %s', (kind) => {
  const clock = { at: Date.now(), now: () => clock.at };
  let s: TestStores;
  beforeEach(async () => {
    clock.at = Date.now();
    s = await openTestStores(kind, { clock });
  });
  afterEach(async () => s.close());

  it('quorum: votes are counted once per person, the quorum decides, and the last decision claims the run', async () => {
    const { approvals, runId } = await pausedRun(s, ['c1', 'c2'], { ...createNoteRule(), quorum: 2 });
    const [first, second] = approvals;
    if (!first || !second) throw new Error('two approvals expected');
    expect(await vote(s, first, 'U2')).toMatchObject({ kind: 'counted', approvers: ['U2'] });
    expect(await vote(s, first, 'U2')).toMatchObject({ kind: 'already_voted' });
    expect(await s.stores.approvals.approvers(first.id)).toEqual(['U2']);
    clock.at += 1;
    expect(await vote(s, first, 'U3')).toMatchObject({
      kind: 'decided',
      runClaimed: false,
      approval: { status: 'approved', decidedBy: 'U2,U3' },
    });
    expect(await vote(s, first, 'U4')).toMatchObject({ kind: 'already_decided' });
    // One rejection ends a request whatever the quorum; the turn is now settled and the run claimed.
    expect(await vote(s, second, 'U5', 'reject')).toMatchObject({
      kind: 'decided',
      runClaimed: true,
      approval: { status: 'rejected', decidedBy: 'U5' },
    });
    expect(await s.stores.runs.getRun(runId)).toMatchObject({ status: 'running' });
    expect(await s.stores.runs.renewLease(runId)).toBe(true);
    const kinds = (await s.stores.auditQueries.chain()).map((e) => e.kind);
    expect(kinds.filter((k) => k === 'run.resumed')).toHaveLength(1);
  });

  it('an approval for the thread grants a standing approval; admins revoke it once', async () => {
    const { approvals, conversationId } = await pausedRun(s);
    const [approval] = approvals;
    if (!approval) throw new Error('no approval');
    const decided = await s.stores.approvals.vote({
      approvalId: approval.id,
      userId: 'U2',
      vote: 'approve',
      reason: null,
      standing: true,
      editedArguments: '{"text":"edited"}',
      audit: [],
    });
    expect(decided).toMatchObject({ kind: 'decided', approval: { editedArguments: '{"text":"edited"}' } });
    expect(await s.stores.standing.find(conversationId, 'create_note')).toEqual({
      grantedBy: 'U2',
      originApprovalId: approval.id,
      grantedAt: expect.any(Number),
    });
    const revoke = (teamId: string) =>
      s.stores.standing.revoke({ teamId, approvalId: approval.id, userId: 'UADMIN', at: clock.now() });
    expect(await revoke('T9')).toEqual({ ok: false, reason: 'not_found' });
    expect(await revoke('T1')).toMatchObject({
      ok: true,
      toolName: 'create_note',
      grantedBy: 'U2',
      conversationId,
    });
    expect(await revoke('T1')).toEqual({ ok: false, reason: 'not_active' });
    expect(await s.stores.standing.find(conversationId, 'create_note')).toBeUndefined();
    const kinds = (await s.stores.auditQueries.chain()).map((e) => e.kind);
    expect(kinds).toEqual(expect.arrayContaining(['standing.granted', 'standing.revoked']));
  });

  it('pending requests of a conversation, oldest first; audit events recorded on their own', async () => {
    const { approvals, conversationId } = await pausedRun(s, ['c1', 'c2']);
    expect((await s.stores.approvals.pendingIn(conversationId)).map((a) => a.id)).toEqual(
      approvals.map((a) => a.id),
    );
    await s.stores.approvals.recordAudit([
      auditEvent('policy.loaded', { at: clock.now(), payload: { summary: 'x' } }),
    ]);
    expect((await s.stores.auditQueries.chain()).at(-1)).toMatchObject({
      kind: 'policy.loaded',
      payload: { summary: 'x' },
    });
  });

  it('card copies are recorded with their audit event, and render from the stored state', async () => {
    const { approvals } = await pausedRun(s);
    const [approval] = approvals;
    if (!approval) throw new Error('no approval');
    await s.stores.cards.addExtraCard(approval, { channelId: 'C0COPY', messageTs: '3.3', link: null });
    await s.stores.cards.addExtraCard(approval, { channelId: 'C0COPY', messageTs: '3.3', link: null });
    expect(await s.stores.cards.extraCards(approval.id)).toEqual([
      { channelId: 'C0COPY', messageTs: '3.3', link: null },
    ]);
    await vote(s, approval, 'U2');
    expect(await s.stores.cards.get(approval.id)).toMatchObject({ status: 'approved' });
    expect(await s.stores.cards.approvers(approval.id)).toEqual(['U2']);
  });

  it('deadlines: a request expires once, in its surface only, and its run is claimed; one reminder a period', async () => {
    const rule = { ...createNoteRule(), expiresAfterMs: 60_000, remindAfterMs: 10_000 };
    const { approvals, runId } = await pausedRun(s, ['c1'], rule, clock.now());
    const [approval] = approvals;
    if (!approval) throw new Error('no approval');
    const events = () => [];
    expect(await s.stores.timers.claimReminders(clock.now(), 'slack', events)).toEqual([]);
    clock.at += 10_000;
    expect((await s.stores.timers.claimReminders(clock.now(), 'slack', events)).map((a) => a.id)).toEqual([
      approval.id,
    ]);
    expect(await s.stores.timers.claimReminders(clock.now(), 'slack', events)).toEqual([]);
    clock.at += 60_000;
    expect(await s.stores.timers.expireDue(clock.now(), 'terminal', events)).toEqual([]);
    const expired = await s.stores.timers.expireDue(clock.now(), 'slack', (a) => [
      auditEvent('approval.expired', { at: clock.now(), approvalId: a.id }),
    ]);
    expect(expired).toEqual([
      { approval: expect.objectContaining({ id: approval.id, status: 'expired' }), runClaimed: true },
    ]);
    expect(await s.stores.timers.expireDue(clock.now(), 'slack', events)).toEqual([]);
    expect(await s.stores.timers.claimReminders(clock.now(), 'slack', events)).toEqual([]);
    expect(await s.stores.runs.getRun(runId)).toMatchObject({ status: 'running' });
  });

  it('decided lists: totals per workspace and tool, read from the daily totals, match the requests', async () => {
    const base = Date.UTC(2026, 4, 1);
    const decided = (teamId: string, toolName: string, at: number) =>
      seedApproval(s.db, { createdAt: at, status: 'approved', decidedBy: 'U2', teamId, toolName });
    const older = await decided('T1', 'delete_note', base);
    const newer = await decided('T1', 'create_note', base + 86_400_000);
    await decided('T2', 'delete_note', base);
    await seedApproval(s.db, { createdAt: base, teamId: 'T1', toolName: 'delete_note' });
    const q = s.stores.auditQueries;
    const page = { limit: 1, offset: 0 };
    expect(await q.history({ teamId: 'T1', ...page })).toMatchObject({ total: 2, items: [{ id: newer }] });
    expect(await q.history({ teamId: 'T1', ...page, offset: 1 })).toMatchObject({
      total: 2,
      items: [{ id: older }],
    });
    expect(await q.history({ teamId: 'T1', tool: 'delete_note', ...page })).toMatchObject({
      total: 1,
      items: [{ id: older }],
    });
    expect(await q.history({ teamId: 'T2', tool: 'create_note', ...page })).toMatchObject({
      total: 0,
      items: [],
    });
    expect(await q.decided({ teamId: 'T1', limit: 1 })).toMatchObject({ total: 2, items: [{ id: newer }] });
    expect(await q.decided({ teamId: 'T3', limit: 1 })).toMatchObject({ total: 0, items: [] });
  });

  it('audit queries: the chain verifies, and filters, pages, details and stats read the same on both engines', async () => {
    const base = Date.UTC(2026, 4, 1);
    const pending = await seedApproval(s.db, { createdAt: base, requesterId: 'U1' });
    const rejected = await seedApproval(s.db, {
      createdAt: base + 1000,
      status: 'rejected',
      decidedBy: 'U2',
      decidedAt: base + 61_000,
      toolName: 'delete_note',
    });
    await seedApproval(s.db, { createdAt: base + 2000, teamId: 'T2' });
    await s.stores.approvals.recordAudit([
      auditEvent('tool.finished', { at: base + 3000, teamId: 'T1', payload: { tool: 'list_notes' } }),
    ]);
    const chain = await s.stores.auditQueries.chain();
    expect(verifyChain(chain)).toMatchObject({ ok: true, count: chain.length });
    const q = s.stores.auditQueries;
    expect((await q.events({ tool: 'list_notes' })).map((e) => e.kind)).toEqual(['tool.finished']);
    expect((await q.events({ userId: 'U2' })).map((e) => e.kind)).toEqual(['approval.rejected']);
    expect((await q.events({ status: 'pending', teamId: 'T1' })).map((e) => e.approvalId)).toEqual([pending]);
    expect((await q.events({ since: base + 1000, until: base + 2000 })).map((e) => e.at)).toEqual([
      base + 1000,
      base + 2000,
    ]);
    expect(await q.pending('T1', { limit: 10, offset: 0 })).toMatchObject({
      total: 1,
      items: [{ id: pending }],
    });
    expect(await q.history({ teamId: 'T1', userId: 'U2', limit: 10, offset: 0 })).toMatchObject({
      total: 1,
      items: [{ id: rejected }],
    });
    expect(await q.history({ teamId: 'T1', tool: 'create_note', limit: 10, offset: 0 })).toMatchObject({
      total: 0,
    });
    expect(await q.detail('T2', rejected)).toBeUndefined();
    expect(await q.detail('T1', rejected)).toMatchObject({
      approval: { id: rejected, status: 'rejected' },
      votes: [{ userId: 'U2', vote: 'reject', at: base + 61_000 }],
    });
    expect(await q.stats('T1')).toEqual({
      counts: [
        { tool: 'create_note', status: 'pending', count: 1 },
        { tool: 'delete_note', status: 'rejected', count: 1 },
      ],
      // Read from its wait bucket: within 5 %.
      medianDecisionMs: bucketWait(waitBucket(60_000)),
      decided: 1,
      usage: { runs: 0, unrecorded: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    });
    expect((await q.requestsBy('T1', 'U1', 5)).map((a) => a.id)).toEqual([rejected, pending]);
  });

  it('dedupe, greetings, notes and App Home viewers', async () => {
    const { dedupe, greetings, notes, homeViewers } = s.stores;
    expect(await dedupe.claim(['event:1', 'msg:1'])).toBe(true);
    expect(await dedupe.claim(['event:2', 'msg:1'])).toBe(false);
    clock.at += 1000;
    await dedupe.prune(clock.now());
    expect(await dedupe.claim(['msg:1'])).toBe(true);
    expect(await greetings.claim('T1', 'U1', clock.now())).toBe(true);
    expect(await greetings.claim('T1', 'U1', clock.now())).toBe(false);
    await greetings.release('T1', 'U1');
    expect(await greetings.claim('T1', 'U1', clock.now())).toBe(true);
    const note = await notes.create('T1', 'hello', 'U1');
    await notes.create('T2', 'elsewhere', 'U1');
    expect(await notes.list('T1')).toEqual([note]);
    expect(await notes.delete('T2', note.id)).toBe(false);
    expect(await notes.delete('T1', note.id)).toBe(true);
    expect(await notes.list('T1')).toEqual([]);
    await homeViewers.remember({ teamId: 'T1', userId: 'U1', auditor: false }, clock.now());
    await homeViewers.remember({ teamId: 'T1', userId: 'U1', auditor: true }, clock.now());
    await homeViewers.remember({ teamId: 'T2', userId: 'U2', auditor: false }, clock.now());
    expect(await homeViewers.viewers('T1')).toEqual([{ teamId: 'T1', userId: 'U1', auditor: true }]);
  });
});
