import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { RunHandedOver } from '../../src/agent/ports.js';
import { initialRunState } from '../../src/agent/run-state.js';
import { ApprovalService } from '../../src/approvals/approval-service.js';
import { Deciders } from '../../src/approvals/deciders.js';
import { auditEvent } from '../../src/audit/audit-event.js';
import { rows } from '../e2e/db-rows.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';
import {
  createNoteRule,
  held,
  newApproval,
  newThread,
  pausedRun,
  pausedState,
  startedRun,
  vote,
} from './store-scenario.js';

/**
 * Every method of the run-side ports (conversations, runs, deliveries, recovery) does the same on SQLite and
 * on PostgreSQL. The approval-side ports are in store-contract-approvals.test.ts; races in store-races.test.ts.
 */
describe.each(DATABASE_KINDS)('run stores on %s', (kind) => {
  const clock = { at: Date.now(), now: () => clock.at };
  let s: TestStores;
  beforeEach(async () => {
    clock.at = Date.now();
    s = await openTestStores(kind, { clock, leaseMs: 30_000 });
  });
  afterEach(async () => s.close());
  const where = () => s.fresh.config;

  it('conversations: one per thread, found again, with their thread', async () => {
    const thread = newThread();
    const id = await s.stores.conversations.findOrCreate(thread, 'slack');
    expect(await s.stores.conversations.findOrCreate(thread, 'slack')).toBe(id);
    expect(await s.stores.conversations.find(thread)).toBe(id);
    expect(await s.stores.conversations.thread(id)).toEqual(thread);
    expect(await s.stores.conversations.find(newThread())).toBeUndefined();
    expect(await s.stores.conversations.thread('conv_missing')).toBeUndefined();
  });

  it('one active run per conversation: later messages queue, and start in order once it ends', async () => {
    const { conversationId, runId, thread } = await startedRun(s);
    const message = (text: string) => ({ ...thread, userId: 'U2', text, messageTs: `${text}.1` });
    const queue = (text: string) =>
      s.stores.conversations.startRunOrQueue({
        conversationId,
        runId: `run_${text}`,
        message: message(text),
        state: initialRunState(),
        audit: [],
      });
    expect(await queue('second')).toBe('queued');
    expect(await queue('third')).toBe('queued');
    const next = (id: string) =>
      s.stores.conversations.startNextQueuedRun({
        conversationId,
        runId: id,
        state: initialRunState(),
        audit: () => [],
      });
    expect(await next('run_too_early')).toBeUndefined();
    await s.stores.runs.finishRun(await held(s, runId), {
      status: 'completed',
      error: null,
      audit: [],
      cancelAudit: () => {
        throw new Error('none');
      },
    });
    expect(await next('run_2')).toMatchObject({ userId: 'U2', text: 'second' });
    expect(await next('run_3')).toBeUndefined();
    const history = await s.stores.runs.loadHistory(conversationId);
    expect(history.filter((i) => i.kind === 'user_message').map((i) => i.data)).toEqual([
      expect.objectContaining({ text: 'hello' }),
      expect.objectContaining({ text: 'second' }),
    ]);
    expect(history.at(-1)).toMatchObject({ runId: 'run_2', turn: 0 });
  });

  it('a delivered message is deduplicated, given its conversation and started in one transaction', async () => {
    const thread = newThread();
    const message = { ...thread, userId: 'U1', text: 'hi', messageTs: thread.threadTs };
    const receive = (runId: string, keys: string[]) =>
      s.stores.conversations.receiveMessage({
        keys,
        surface: 'slack',
        runId,
        message,
        state: initialRunState(),
        audit: (conversationId) => [auditEvent('run.started', { at: clock.now(), conversationId, runId })],
      });
    const first = await receive('run_first', ['event:E1', 'msg:T1:C1:1']);
    expect(first).toEqual({ kind: 'started', conversationId: expect.any(String) });
    // The same message again (a retry, or the mention's twin message event): nothing more happens.
    expect(await receive('run_again', ['event:E2', 'msg:T1:C1:1'])).toEqual({ kind: 'duplicate' });
    expect(await s.stores.runs.getRun('run_again')).toBeUndefined();
    const again = { ...message, messageTs: '2.0' };
    const queued = await s.stores.conversations.receiveMessage({
      keys: ['msg:T1:C1:2'],
      surface: 'slack',
      runId: 'run_second',
      message: again,
      state: initialRunState(),
      audit: () => [],
    });
    expect(queued).toEqual({
      kind: 'queued',
      conversationId: first.kind === 'started' ? first.conversationId : '',
    });
    const events = await s.stores.auditQueries.chain();
    expect(events.filter((e) => e.kind === 'run.started').map((e) => e.runId)).toEqual(['run_first']);
  });

  it('a message behind a paused run is queued behind the approval; thread context is stored once', async () => {
    const { conversationId, thread } = await pausedRun(s);
    const context = {
      kind: 'thread_context' as const,
      data: { messages: [{ ts: '1.0', author: 'U9', text: 'earlier' }] },
    };
    const result = await s.stores.conversations.startRunOrQueue({
      conversationId,
      runId: 'run_late',
      message: { ...thread, userId: 'U3', text: 'later', messageTs: '9.9' },
      state: initialRunState(),
      audit: [],
      context,
    });
    expect(result).toBe('queued_behind_approval');
    const fresh = newThread();
    const freshId = await s.stores.conversations.findOrCreate(fresh, 'slack');
    await s.stores.conversations.startRunOrQueue({
      conversationId: freshId,
      runId: 'run_ctx',
      message: { ...fresh, userId: 'U3', text: 'hi', messageTs: fresh.threadTs },
      state: initialRunState(),
      audit: [],
      context,
    });
    expect((await s.stores.runs.loadHistory(freshId)).map((i) => i.kind)).toEqual([
      'thread_context',
      'user_message',
    ]);
  });

  it('a turn stores its items and approvals, owes each pending request a card, and pauses once', async () => {
    const { conversationId, runId, approvals } = await pausedRun(s, ['c1', 'c2']);
    expect(await s.stores.runs.getRun(runId)).toMatchObject({
      id: runId,
      conversationId,
      status: 'paused',
      teamId: 'T1',
      channelId: 'C1',
    });
    expect(approvals.map((a) => [a.callId, a.status, a.turn])).toEqual([
      ['c1', 'pending', 1],
      ['c2', 'pending', 1],
    ]);
    expect((await s.stores.runs.approvalsForTurn(runId, 1)).map((a) => a.callId).sort()).toEqual([
      'c1',
      'c2',
    ]);
    const owed = await rows(where(), 'select id from deliveries order by id');
    expect(owed.map((r) => r.id).sort()).toEqual(approvals.map((a) => `card:${a.id}`).sort());
    const lease = await rows(where(), 'select lease_owner, lease_until from runs where id = ?', runId);
    expect(lease).toEqual([{ lease_owner: null, lease_until: null }]);
    // Paused, the run is nobody's: writing it again needs a claim (a decision, an expiry, recovery).
    await expect(s.stores.runs.pauseIfPending(await held(s, runId), 1, [])).rejects.toBeInstanceOf(
      RunHandedOver,
    );
  });

  it('a run with nothing pending does not pause; a standing approval stores the call approved', async () => {
    const { runId } = await startedRun(s);
    const covered = {
      ...newApproval('c1'),
      automatic: { decidedBy: 'U7', originApprovalId: 'apr_origin' },
    };
    const [stored] = await s.stores.runs.saveTurn(await held(s, runId), {
      state: { ...initialRunState(), turn: 1 },
      status: 'running',
      items: [],
      approvals: [covered],
      audit: [],
    });
    expect(stored).toMatchObject({ status: 'approved', decidedBy: 'U7', originApprovalId: 'apr_origin' });
    expect(await s.stores.runs.pauseIfPending(await held(s, runId), 1, [])).toBe(false);
    expect(await rows(where(), 'select id from deliveries')).toEqual([]);
  });

  it('an approved call is marked executing once; its output, status and state are stored together', async () => {
    const { runId, approvals, state } = await pausedRun(s);
    const [approval] = approvals;
    if (!approval) throw new Error('no approval');
    const decided = await vote(s, approval, 'U2');
    expect(decided).toMatchObject({ kind: 'decided', runClaimed: true });
    expect(await s.stores.runs.markExecuting(await held(s, runId), approval.id, [])).toBe(true);
    expect(await s.stores.runs.markExecuting(await held(s, runId), approval.id, [])).toBe(false);
    await s.stores.runs.saveToolOutput(await held(s, runId), {
      state: { ...state, pausedTurn: null },
      item: {
        kind: 'tool_output',
        data: { callId: 'c1', name: 'create_note', output: 'Created note #1.', status: 'ok' },
      },
      approval: { id: approval.id, status: 'executed', result: 'Created note #1.' },
      audit: [auditEvent('tool.finished', { at: clock.now(), runId })],
    });
    expect(await s.stores.approvals.get(approval.id)).toMatchObject({
      status: 'executed',
      result: 'Created note #1.',
    });
    const history = await s.stores.runs.loadHistory(approval.conversationId);
    expect(history.at(-1)).toMatchObject({ kind: 'tool_output', runId, turn: 1 });
    const run = await s.stores.runs.getRun(runId);
    expect(JSON.parse(run?.state ?? '{}')).toMatchObject({ pausedTurn: null, turn: 1 });
  });

  it('a run that ends early cancels what it would still execute, owes its sentence, and gives up its lease', async () => {
    // Still running (its free calls running, say): one call approved meanwhile, one still waiting.
    const { runId } = await startedRun(s);
    const approvals = await s.stores.runs.saveTurn(await held(s, runId), {
      state: pausedState(['c1', 'c2']),
      status: 'running',
      items: [],
      approvals: [newApproval('c1'), newApproval('c2')],
      audit: [],
    });
    const [first] = approvals;
    if (!first) throw new Error('no approval');
    expect(await vote(s, first, 'U2')).toMatchObject({ kind: 'decided', runClaimed: false });
    const cancelled = await s.stores.runs.finishRun(await held(s, runId), {
      status: 'cancelled',
      error: 'stopped',
      reply: 'I stopped.',
      audit: [],
      cancelAudit: (a) => auditEvent('approval.cancelled', { at: clock.now(), approvalId: a.id }),
    });
    expect(cancelled.map((a) => [a.callId, a.status, a.reason]).sort()).toEqual([
      ['c1', 'cancelled', 'stopped'],
      ['c2', 'cancelled', 'stopped'],
    ]);
    expect(await rows(where(), "select id, text from deliveries where kind = 'reply'")).toEqual([
      { id: `reply:${runId}`, text: 'I stopped.' },
    ]);
    // Each cancelled request's card loses its buttons, owed from this transaction.
    const owedUpdates = await rows(where(), "select approval_id from deliveries where kind = 'card_update'");
    expect(owedUpdates.map((d) => d.approval_id).sort()).toEqual(cancelled.map((a) => a.id).sort());
    expect(await rows(where(), 'select status, lease_owner from runs where id = ?', runId)).toEqual([
      { status: 'cancelled', lease_owner: null },
    ]);
    const events = await s.stores.auditQueries.chain();
    expect(events.filter((e) => e.kind === 'approval.cancelled')).toHaveLength(2);
  });

  it('a run stopped while its turn was settled does not pause: the stop is answered instead', async () => {
    const { runId, thread } = await startedRun(s);
    await s.stores.runs.saveTurn(await held(s, runId), {
      state: pausedState(['c1']),
      status: 'running',
      items: [],
      approvals: [newApproval('c1')],
      audit: [],
    });
    await s.stores.conversations.requestStop({ thread, userId: 'U9' });
    const stopped = s.stores.runs.pauseIfPending(await held(s, runId), 1, [
      auditEvent('run.paused', { at: clock.now(), runId }),
    ]);
    await expect(stopped).rejects.toMatchObject({ code: 'run.stopped', by: 'U9' });
    const [run] = await rows(where(), 'select status, lease_owner from runs where id = ?', runId);
    expect(run?.status).toBe('running');
    expect(run?.lease_owner).not.toBeNull();
    const events = await s.stores.auditQueries.chain();
    expect(events.filter((e) => e.kind === 'run.paused')).toHaveLength(0);
  });

  it('a stop request is recorded on the active run: a running one keeps its driver, a paused one is claimed', async () => {
    const nothing = newThread();
    expect(await s.stores.conversations.requestStop({ thread: nothing, userId: 'U9' })).toEqual({
      kind: 'no_run',
    });

    const { runId, conversationId, thread } = await startedRun(s);
    const lease = await held(s, runId);
    expect(await s.stores.runs.stopRequest(runId)).toBeUndefined();
    expect(await s.stores.conversations.requestStop({ thread, userId: 'U9' })).toEqual({
      kind: 'running',
      runId,
      conversationId,
    });
    // The first request is kept; the driver still holds the run.
    await s.stores.conversations.requestStop({ thread, userId: 'U8' });
    expect(await s.stores.runs.stopRequest(runId)).toBe('U9');
    expect(await s.stores.runs.renewLease(runId)).toBe(true);
    expect((await held(s, runId)).token).toBe(lease.token);

    const paused = await pausedRun(s);
    const pausedThread = await s.stores.conversations.thread(paused.conversationId);
    if (!pausedThread) throw new Error('no thread');
    expect(await s.stores.conversations.requestStop({ thread: pausedThread, userId: 'U7' })).toEqual({
      kind: 'claimed',
      runId: paused.runId,
      conversationId: paused.conversationId,
    });
    const [claimed] = await rows(
      where(),
      'select status, lease_owner, stop_requested_by from runs where id = ?',
      paused.runId,
    );
    expect(claimed).toMatchObject({ status: 'running', stop_requested_by: 'U7' });
    expect(claimed?.lease_owner).not.toBeNull();
    // Ended: nothing to stop any more.
    await s.stores.runs.finishRun(await held(s, paused.runId), {
      status: 'cancelled',
      error: 'stopped',
      audit: [],
      cancelAudit: (a) => auditEvent('approval.cancelled', { at: clock.now(), approvalId: a.id }),
    });
    expect(await s.stores.conversations.requestStop({ thread: pausedThread, userId: 'U7' })).toEqual({
      kind: 'no_run',
    });
  });

  it('only the lease holder writes a run: another process is refused, and renewing needs the lease', async () => {
    const { runId } = await startedRun(s);
    const other = await s.another({ clock, leaseMs: 30_000 });
    expect(await s.stores.runs.renewLease(runId)).toBe(true);
    expect(await other.stores.runs.renewLease(runId)).toBe(false);
    await expect(
      other.stores.runs.saveTurn(await held(other, runId), {
        state: initialRunState(),
        status: 'running',
        items: [],
        approvals: [],
        audit: [],
      }),
    ).rejects.toBeInstanceOf(RunHandedOver);
    await expect(other.stores.runs.pauseIfPending(await held(other, runId), 1, [])).rejects.toBeInstanceOf(
      RunHandedOver,
    );
  });

  it('a driver that stalled past its lease writes nothing, even once its process holds the run again', async () => {
    const { runId, approvals, state } = await pausedRun(s, ['c1']);
    const [approval] = approvals;
    if (!approval) throw new Error('no approval');
    await vote(s, approval, 'U2');
    const stale = await held(s, runId);
    // The driver stalls; its lease runs out and another process takes the run over and pauses it again.
    clock.at += 30_001;
    const other = await s.another({ clock, leaseMs: 30_000 });
    expect(await other.stores.recovery.claimAbandonedRuns({ surface: 'slack' })).toHaveLength(1);
    const saved = await other.stores.runs.saveTurn(await held(other, runId), {
      state: pausedState(['c9']),
      status: 'running',
      items: [],
      approvals: [newApproval('c9')],
      audit: [],
    });
    expect(await other.stores.runs.pauseIfPending(await held(other, runId), 1, [])).toBe(true);
    // A click in the first process claims the run for it once more...
    const [again] = saved;
    if (!again) throw new Error('no approval');
    expect(await vote(s, again, 'U3')).toMatchObject({ kind: 'decided', runClaimed: true });
    // ...but the stalled driver's claim is not that claim: its late write is refused and changes nothing.
    const before = await s.stores.runs.loadHistory(approval.conversationId);
    await expect(
      s.stores.runs.saveToolOutput(stale, {
        state: { ...state, pausedTurn: null },
        item: {
          kind: 'tool_output',
          data: { callId: 'c1', name: 'create_note', output: 'late', status: 'ok' },
        },
        approval: { id: approval.id, status: 'executed', result: 'late' },
        audit: [],
      }),
    ).rejects.toBeInstanceOf(RunHandedOver);
    expect(await s.stores.runs.loadHistory(approval.conversationId)).toEqual(before);
    expect(await s.stores.runs.renewLease(runId)).toBe(true);
  });

  it('recovery takes over running runs whose lease expired or whose owner is gone, once, in its surface only', async () => {
    const { runId } = await startedRun(s);
    const terminal = newThread('local');
    const terminalConversation = await s.stores.conversations.findOrCreate(terminal, 'terminal');
    await s.stores.conversations.startRunOrQueue({
      conversationId: terminalConversation,
      runId: 'run_terminal',
      message: { ...terminal, userId: 'alice', text: 'hi', messageTs: terminal.threadTs },
      state: initialRunState(),
      audit: [],
    });
    const other = await s.another({ clock, leaseMs: 30_000 });
    expect(await other.stores.recovery.claimAbandonedRuns({ surface: 'slack' })).toEqual([]);
    clock.at += 30_001;
    const claimed = await other.stores.recovery.claimAbandonedRuns({ surface: 'slack' });
    expect(claimed).toEqual([
      { runId, conversationId: expect.any(String), thread: expect.objectContaining({ teamId: 'T1' }) },
    ]);
    expect(await s.stores.recovery.claimAbandonedRuns({ surface: 'slack' })).toEqual([]);
    expect(await other.stores.runs.renewLease(runId)).toBe(true);
    expect(await s.stores.runs.renewLease(runId)).toBe(false);
    // The terminal takes its own conversation's run whatever the lease says.
    const third = await s.another({ clock, ownerIsGone: () => false });
    expect(
      (await third.stores.recovery.claimAbandonedRuns({ conversationId: terminalConversation })).map(
        (r) => r.runId,
      ),
    ).toEqual(['run_terminal']);
    // An owner known to be gone is not waited for.
    const fourth = await s.another({ clock, ownerIsGone: (owner) => owner === other.ctx.owner });
    expect(
      (await fourth.stores.recovery.claimAbandonedRuns({ surface: 'slack' })).map((r) => r.runId),
    ).toEqual([runId]);
  });

  it('recovery never takes a run its caller still drives, though its lease ran out', async () => {
    const { runId } = await startedRun(s);
    const other = await startedRun(s);
    clock.at += 30_001;
    const claimed = await s.stores.recovery.claimAbandonedRuns({ surface: 'slack' }, [runId]);
    expect(claimed.map((r) => r.runId)).toEqual([other.runId]);
    expect(await s.stores.runs.renewLease(runId)).toBe(true);
  });

  it('calls left executing are reported once; stalled queues are found', async () => {
    const { runId, approvals, conversationId, thread } = await pausedRun(s);
    const [approval] = approvals;
    if (!approval) throw new Error('no approval');
    await vote(s, approval, 'U2');
    await s.stores.runs.markExecuting(await held(s, runId), approval.id, []);
    expect((await s.stores.recovery.unreportedExecutions(runId)).map((a) => a.id)).toEqual([approval.id]);
    await s.stores.recovery.setUnknownOutcome(approval.id, 'unknown');
    await s.stores.recovery.setUnknownOutcome(approval.id, 'again');
    expect(await s.stores.recovery.unreportedExecutions(runId)).toEqual([]);
    expect((await s.stores.approvals.get(approval.id))?.result).toBe('unknown');
    await s.stores.conversations.startRunOrQueue({
      conversationId,
      runId: 'run_q',
      message: { ...thread, userId: 'U4', text: 'queued', messageTs: '5.5' },
      state: initialRunState(),
      audit: [],
    });
    expect(await s.stores.recovery.stalledQueues('slack')).toEqual([]);
    await s.stores.runs.finishRun(await held(s, runId), {
      status: 'failed',
      error: 'x',
      audit: [],
      cancelAudit: (a) => auditEvent('approval.cancelled', { at: 1, approvalId: a.id }),
    });
    expect(await s.stores.recovery.stalledQueues('slack')).toEqual([conversationId]);
    expect(await s.stores.recovery.stalledQueues('terminal')).toEqual([]);
  });

  it('deliveries: a card is taken by one process, posted once, and a failed one waits its turn', async () => {
    const { approvals } = await pausedRun(s, ['c1', 'c2']);
    const ids = approvals.map((a) => a.id);
    const other = await s.another({ clock, leaseMs: 30_000 });
    expect(await other.stores.deliveries.takeCards(ids)).toEqual([]);
    const cards = await s.stores.deliveries.takeCards(ids);
    expect(cards.map((c) => c.approval.id)).toEqual(ids);
    const [first, second] = cards;
    if (!first || !second) throw new Error('two cards expected');
    await s.stores.deliveries.cardPosted(first.approval.id, { channelId: 'C1', messageTs: '7.7' }, [
      auditEvent('approval.card_posted', { at: clock.now(), approvalId: first.approval.id }),
    ]);
    expect((await s.stores.approvals.get(first.approval.id))?.messageTs).toBe('7.7');
    await s.stores.deliveries.failed(second, { retryAt: clock.now() + 1000, noticed: true });
    expect(await other.stores.deliveries.takeDue({ surface: 'slack' }, clock.now())).toEqual([]);
    const due = await other.stores.deliveries.takeDue({ surface: 'slack' }, clock.now() + 1000);
    expect(due).toEqual([expect.objectContaining({ kind: 'card', attempts: 1, noticed: true })]);
    expect(await s.stores.deliveries.takeDue({ surface: 'terminal' }, clock.now() + 5000)).toEqual([]);
  });

  it('deliveries: a reply is owed with the run that ends, given back with what is left, and posted once', async () => {
    const { runId, conversationId } = await startedRun(s);
    await s.stores.runs.saveTurn(await held(s, runId), {
      state: { ...initialRunState(), turn: 1 },
      status: 'completed',
      items: [],
      approvals: [],
      audit: [],
      reply: 'The answer.',
    });
    // The process that ended the run is posting it: nobody else takes it while its lease lasts.
    const other = await s.another({ clock, leaseMs: 30_000 });
    expect(await other.stores.deliveries.takeDue({ conversationId }, clock.now())).toEqual([]);
    expect(await s.stores.deliveries.takeDue({ conversationId }, clock.now())).toEqual([]);
    clock.at += 30_001;
    const [reply] = await other.stores.deliveries.takeDue({ conversationId }, clock.now());
    expect(reply).toMatchObject({ kind: 'reply', runId, text: 'The answer.', attempts: 0 });
    if (!reply) throw new Error('the reply is owed');
    await other.stores.deliveries.failed(reply, { retryAt: clock.now(), text: 'answer.' });
    expect(await s.stores.deliveries.takeDue({ surface: 'slack' }, clock.now())).toEqual([
      expect.objectContaining({ kind: 'reply', text: 'answer.', attempts: 1 }),
    ]);
    await s.stores.deliveries.replyPosted(runId);
    expect(await other.stores.deliveries.takeDue({ surface: 'slack' }, clock.now() + 1e9)).toEqual([]);
  });

  it('deliveries: a refused card update is owed once per card, taken by one process, with the latest change', async () => {
    const { approvals } = await pausedRun(s);
    const [approval] = approvals;
    if (!approval) throw new Error('no approval');
    await s.stores.deliveries.oweCardUpdate(approval, { dueAt: clock.now() + 1000, attempts: 1, update: {} });
    await vote(s, approval, 'U2');
    await s.stores.deliveries.oweCardUpdate(approval, {
      dueAt: clock.now() + 2000,
      attempts: 1,
      update: { standing: true, fallback: { channelId: 'C1', messageTs: '7.7' } },
    });
    expect(await s.stores.deliveries.takeDue({ surface: 'slack' }, clock.now() + 1000)).toEqual([]);
    const other = await s.another({ clock, leaseMs: 30_000 });
    const [owed] = await other.stores.deliveries.takeDue({ surface: 'slack' }, clock.now() + 2000);
    // Decided since it was first owed: rendered from the state stored now, with the latest change's options.
    expect(owed).toMatchObject({
      kind: 'card_update',
      attempts: 1,
      approval: { id: approval.id, status: 'approved' },
      update: { standing: true, fallback: { channelId: 'C1', messageTs: '7.7' } },
    });
    if (!owed) throw new Error('the update is owed');
    // Leased to the process that took it.
    expect(await s.stores.deliveries.takeDue({ surface: 'slack' }, clock.now() + 2000)).toEqual([]);
    await other.stores.deliveries.failed(owed, { retryAt: clock.now() + 3000 });
    const [again] = await s.stores.deliveries.takeDue({ surface: 'slack' }, clock.now() + 3000);
    expect(again).toMatchObject({ kind: 'card_update', attempts: 2, owedAt: clock.now() + 3000 });
    if (again?.kind !== 'card_update') throw new Error('the update is owed');
    await s.stores.deliveries.cardsUpdated([{ approvalId: approval.id, owedAt: again.owedAt }]);
    expect(await rows(where(), "select id from deliveries where kind = 'card_update'")).toEqual([]);
  });

  it("deliveries: a change to a request owes its card's update, leased to the process that made it, until it says the update landed", async () => {
    const owedUpdates = () =>
      rows(where(), "select approval_id, lease_owner from deliveries where kind = 'card_update'");
    const other = await s.another({ clock, leaseMs: 30_000 });
    const first = await pausedRun(s, ['c1'], { ...createNoteRule(), quorum: 2 });
    const second = await pausedRun(s, ['c1'], { ...createNoteRule(), expiresAfterMs: 60_000 }, clock.now());
    const [decided] = first.approvals;
    const [expiring] = second.approvals;
    if (!decided || !expiring) throw new Error('no approvals');
    const owedAt = (approvalId: string) => s.stores.deliveries.owedCardUpdate(approvalId);
    await vote(s, decided, 'U2');
    expect(await owedUpdates()).toEqual([{ approval_id: decided.id, lease_owner: s.ctx.owner }]);
    // The process that counted the vote shows it; nobody else takes it meanwhile.
    expect(await other.stores.deliveries.takeDue({ surface: 'slack' }, clock.now())).toEqual([]);
    const counted = await owedAt(decided.id);
    expect(counted).toBe(clock.now());
    expect(await other.stores.deliveries.owedCardUpdate(decided.id)).toBeUndefined();
    // The second vote decides before the first's update is written off: that write-off leaves the decision's.
    clock.at += 1;
    await vote(s, decided, 'U3');
    await s.stores.deliveries.cardsUpdated([{ approvalId: decided.id, owedAt: counted ?? 0 }]);
    expect(await owedUpdates()).toEqual([{ approval_id: decided.id, lease_owner: s.ctx.owner }]);
    await s.stores.deliveries.cardsUpdated([
      { approvalId: decided.id, owedAt: (await owedAt(decided.id)) ?? 0 },
    ]);
    expect(await owedUpdates()).toEqual([]);

    // Written off only by the process that owes it: another's word does not count.
    clock.at += 60_001;
    const expired = await s.stores.timers.expireDue(clock.now(), 'slack', () => []);
    expect(expired.map((e) => e.approval.id)).toEqual([expiring.id]);
    await other.stores.deliveries.cardsUpdated([{ approvalId: expiring.id, owedAt: clock.now() }]);
    expect(await owedUpdates()).toEqual([{ approval_id: expiring.id, lease_owner: s.ctx.owner }]);
    // The process that expired it stopped before showing it: once its lease ran out, another shows it.
    clock.at += 30_001;
    const [owed] = await other.stores.deliveries.takeDue({ surface: 'slack' }, clock.now());
    expect(owed).toMatchObject({
      kind: 'card_update',
      attempts: 0,
      approval: { id: expiring.id, status: 'expired' },
    });
  });

  it('deliveries: a decision from a card whose place was never stored owes that card its update, for any process', async () => {
    const other = await s.another({ clock, leaseMs: 30_000 });
    const service = new ApprovalService({
      store: s.stores.approvals,
      clock,
      deciders: new Deciders({ clock, adminUserIds: [] }),
    });
    const { approvals } = await pausedRun(s, ['c1', 'c2']);
    const [inThread, elsewhere] = approvals;
    if (!inThread || !elsewhere) throw new Error('no approvals');
    expect(inThread.messageTs).toBeNull();
    const decide = (approval: typeof inThread, clicked: { channelId: string; threadTs: string }) =>
      service.decide({
        approvalId: approval.id,
        userId: 'U2',
        teamId: approval.teamId,
        channelId: clicked.channelId,
        clicked: { ...clicked, messageTs: '9.9' },
        vote: 'approve',
        reason: null,
      });
    expect(await decide(inThread, inThread)).toMatchObject({ kind: 'decided' });
    // A message in another thread is not this request's card, whatever the click says.
    expect(await decide(elsewhere, { channelId: elsewhere.channelId, threadTs: '1.1' })).toMatchObject({
      kind: 'decided',
    });
    // The process that decided stopped before updating the cards: once its lease ran out, another does.
    clock.at += 30_001;
    const owed = await other.stores.deliveries.takeDue({ surface: 'slack' }, clock.now());
    const fallbacks = Object.fromEntries(
      owed.map((d) => [
        d.kind === 'card_update' ? d.approval.id : d.kind,
        'update' in d ? d.update : undefined,
      ]),
    );
    expect(fallbacks).toEqual({
      [inThread.id]: { fallback: { channelId: inThread.channelId, messageTs: '9.9' } },
      [elsewhere.id]: {},
    });
  });

  it('deliveries: a card whose request was decided before it was posted is owed no more', async () => {
    const { approvals } = await pausedRun(s);
    const [approval] = approvals;
    if (!approval) throw new Error('no approval');
    await vote(s, approval, 'U2', 'reject');
    clock.at += 60_000;
    // Only the decision's card update is left, which renders whatever card there is (none was posted).
    const due = await s.stores.deliveries.takeDue({ surface: 'slack' }, clock.now());
    expect(due.map((d) => d.kind)).toEqual(['card_update']);
    expect(await rows(where(), "select id from deliveries where kind = 'card'")).toEqual([]);
  });
});
