import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChatModel } from '../../src/agent/model.js';
import { leaseOf } from '../../src/agent/ports.js';
import { defineTool } from '../../src/agent/tool.js';
import { ToolRegistry } from '../../src/agent/tool-registry.js';
import { ApprovalService } from '../../src/approvals/approval-service.js';
import { Deciders } from '../../src/approvals/deciders.js';
import { count, rows } from '../../src/db/sql/program.js';
import { createBuiltInTools } from '../../src/tools/built-in-tools.js';
import { openTestStores, type TestStores } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { answer, createTestRunner, scripted, startRun, thread, usage } from './runner-rig.js';

const call = (name: string, args: string, callId = `call_${name}`) => ({ callId, name, arguments: args });

describe('runner and stores on a real SQLite database', () => {
  let t: TestStores;
  let executed: string[];

  beforeEach(async () => {
    t = await openTestStores('sqlite');
    executed = [];
  });
  afterEach(() => t.close());

  async function setup(model: ChatModel) {
    const { stores, ctx } = t;
    const tools = new ToolRegistry(
      createBuiltInTools({
        clock: ctx.clock,
        notes: stores.notes,
        poster: {
          post: async (c) => {
            executed.push(c);
            return { kind: 'posted' as const };
          },
          postText: async () => {},
        },
      }),
    );
    const runner = createTestRunner(t, { model, tools });
    const approvals = new ApprovalService({
      store: stores.approvals,
      clock: ctx.clock,
      deciders: new Deciders({ clock: ctx.clock, adminUserIds: ['UADMIN'] }),
    });
    const conversationId = await stores.conversations.findOrCreate(thread, 'slack');
    const start = async (text: string) => (await startRun(stores.conversations, conversationId, text)).runId;
    return { runner, approvals, start, runStore: stores.runs };
  }

  const auditKinds = async () => (await t.stores.auditQueries.chain()).map((e) => e.kind);

  it('arguments that are not JSON still need approval, and approving them runs nothing', async () => {
    const model = scripted([
      { text: null, toolCalls: [call('create_note', '{"text": "oops"')], usage },
      { text: 'I could not parse that.', toolCalls: [], usage },
    ]);
    const { runner, approvals, start, runStore } = await setup(model);
    const runId = await start('add a note');
    const paused = await runner.advance(runId);
    if (paused.kind !== 'paused') throw new Error(`expected a pause, got ${paused.kind}`);
    const [approval] = paused.approvals;
    if (!approval) throw new Error('no approval');
    const decision = await approvals.decide({
      approvalId: approval.id,
      userId: 'U2',
      teamId: 'T1',
      channelId: 'C1',
      vote: 'approve',
      reason: null,
    });
    expect(decision).toMatchObject({ ok: true, kind: 'decided', runClaimed: true });
    expect(await runner.advance(runId)).toEqual({ kind: 'completed', text: 'I could not parse that.' });
    const outputs = (await runStore.loadHistory(approval.conversationId)).filter(
      (i) => i.kind === 'tool_output',
    );
    expect(outputs.map((o) => o.data)).toEqual([
      expect.objectContaining({ status: 'error', output: expect.stringContaining('not valid JSON') }),
    ]);
    expect(await t.stores.notes.list('T1')).toEqual([]);
  });

  it('the turn counter carries across resumes: maxTurns bounds the whole run', async () => {
    const gated = (i: number) => ({
      text: null,
      toolCalls: [call('create_note', `{"text":"n${i}"}`, `c${i}`)],
      usage,
    });
    const model = scripted([gated(1), gated(2), gated(3)]);
    const tools = new ToolRegistry(
      createBuiltInTools({
        clock: t.ctx.clock,
        notes: t.stores.notes,
        poster: { post: async () => ({ kind: 'posted' as const }), postText: async () => {} },
      }),
    );
    const runner = createTestRunner(t, { model, tools, limits: { maxTurns: 2, maxApprovalRounds: 5 } });
    const { approvals, start } = await setup(model);
    const runId = await start('loop');
    for (let round = 0; round < 2; round += 1) {
      const outcome = await runner.advance(runId);
      if (outcome.kind !== 'paused') throw new Error(`round ${round}: ${outcome.kind}`);
      for (const approval of outcome.approvals) {
        await approvals.decide({
          approvalId: approval.id,
          userId: 'U2',
          teamId: 'T1',
          channelId: 'C1',
          vote: 'approve',
          reason: null,
        });
      }
    }
    const end = await runner.advance(runId);
    expect(end).toMatchObject({ kind: 'failed', message: expect.stringContaining('limit of 2 model calls') });
    expect(model.calls).toBe(2);
  });

  it('an approval marked executing is never run again: the model is told the outcome is unknown', async () => {
    const model = scripted([
      { text: null, toolCalls: [call('create_note', '{"text":"x"}')], usage },
      { text: 'ok', toolCalls: [], usage },
    ]);
    const { runner, approvals, start, runStore } = await setup(model);
    const runId = await start('note');
    const paused = await runner.advance(runId);
    if (paused.kind !== 'paused' || !paused.approvals[0]) throw new Error('expected a pause');
    const approvalId = paused.approvals[0].id;
    await approvals.decide({
      approvalId,
      userId: 'U2',
      teamId: 'T1',
      channelId: 'C1',
      vote: 'approve',
      reason: null,
    });
    // A process claimed the call and died while the tool ran.
    const lease = leaseOf((await runStore.getRun(runId)) ?? { id: runId, leaseToken: null });
    expect(await runStore.markExecuting(lease, approvalId, [])).toBe(true);
    expect(await runStore.markExecuting(lease, approvalId, [])).toBe(false);
    await runner.advance(runId);
    expect(await t.stores.notes.list('T1')).toEqual([]);
    const output = (await runStore.loadHistory(paused.approvals[0].conversationId)).find(
      (i) => i.kind === 'tool_output',
    );
    expect(output?.data).toMatchObject({
      status: 'unknown',
      output: expect.stringContaining('outcome of this tool call is unknown'),
    });
    expect(await auditKinds()).toContain('tool.outcome_unknown');
  });

  it('policy: delete_note is for admins only and never for the requester; refusals are audited', async () => {
    const model = scripted([{ text: null, toolCalls: [call('delete_note', '{"id":1}')], usage }]);
    const { runner, approvals, start } = await setup(model);
    const paused = await runner.advance(await start('delete it'));
    if (paused.kind !== 'paused' || !paused.approvals[0]) throw new Error('expected a pause');
    const id = paused.approvals[0].id;
    const decide = (userId: string) =>
      approvals.decide({
        approvalId: id,
        userId,
        teamId: 'T1',
        channelId: 'C1',
        vote: 'approve',
        reason: null,
      });
    expect(await decide('U1')).toMatchObject({ ok: false, kind: 'not_allowed' });
    expect(await decide('U2')).toMatchObject({
      ok: false,
      kind: 'not_allowed',
      message: expect.stringContaining('admins'),
    });
    expect(
      await approvals.decide({
        approvalId: id,
        userId: 'UADMIN',
        teamId: 'T2',
        channelId: 'C1',
        vote: 'approve',
        reason: null,
      }),
    ).toEqual({ ok: false, kind: 'not_found' });
    expect(await decide('UADMIN')).toMatchObject({ ok: true, kind: 'decided' });
    expect(await decide('UADMIN')).toMatchObject({ ok: false, kind: 'already_decided' });
    const refusals = (await t.stores.auditQueries.chain()).filter((e) => e.kind === 'approval.refused');
    // The attempt from another workspace is a refusal too, recorded in that workspace.
    expect(refusals.map((e) => [e.actor, e.teamId])).toEqual([
      ['U1', 'T1'],
      ['U2', 'T1'],
      ['UADMIN', 'T2'],
    ]);
  });
});

describe('calls are stored before they run', () => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores('sqlite');
  });
  afterEach(() => t.close());

  it('a call covered by "approve for this thread" that was running when the process died is not run again', async () => {
    let executions = 0;
    const hanging = defineTool({
      name: 'create_note',
      description: 'never finishes, like a process that died mid-call',
      parameters: z.object({ text: z.string() }),
      needsApproval: true,
      execute: () => {
        executions += 1;
        return new Promise<string>(() => {});
      },
    });
    const model = scripted([
      { text: null, toolCalls: [call('create_note', '{"text":"x"}')], usage },
      { text: 'Told you.', toolCalls: [], usage },
    ]);
    const conversationId = await t.stores.conversations.findOrCreate(thread, 'slack');
    await t.db.write(function* () {
      yield* count(sql`insert into standing_approvals (conversation_id, tool_name, granted_by,
        origin_approval_id, granted_at) values (${conversationId}, 'create_note', 'U2', 'apr_origin',
        ${t.ctx.clock.now()})`);
    });
    const { runId } = await startRun(t.stores.conversations, conversationId, 'note');
    // The first process runs the auto-approved call and never comes back.
    void createTestRunner(t, { model, tools: [hanging] }).advance(runId);
    await waitUntil(() => executions === 1);
    // After a restart a new process, which knows the first one is gone, takes the (still `running`) run over.
    const restarted = await t.another({ ownerIsGone: (owner) => owner === t.ctx.owner });
    const claimed = await restarted.stores.recovery.claimAbandonedRuns({ surface: 'slack' });
    expect(claimed.map((c) => c.runId)).toEqual([runId]);
    const again = createTestRunner(restarted, { model, tools: [hanging] });
    expect(await again.advance(runId)).toEqual({ kind: 'completed', text: 'Told you.' });
    expect(executions).toBe(1);
    expect(model.calls).toBe(2);
    const outputs = (await restarted.stores.runs.loadHistory(conversationId)).filter(
      (item) => item.kind === 'tool_output',
    );
    expect(outputs.map((item) => item.data.status)).toEqual(['unknown']);
  });
});

describe('the last message of a run', () => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores('sqlite');
  });
  afterEach(() => t.close());

  it('is owed to the thread in the same transaction that ends the run', async () => {
    const runner = createTestRunner(t, { model: scripted([answer('All done here.')]), tools: [] });
    const conversationId = await t.stores.conversations.findOrCreate(thread, 'slack');
    const { runId } = await startRun(t.stores.conversations, conversationId, 'hi');
    await runner.advance(runId);
    // Nothing was posted yet (a crash here): the answer is still owed...
    const owed = await t.db.read(function* () {
      return yield* rows(sql`select id, kind, conversation_id, run_id, text from deliveries`);
    });
    expect(owed).toEqual([
      {
        id: `reply:${runId}`,
        kind: 'reply',
        conversation_id: conversationId,
        run_id: runId,
        text: 'All done here.',
      },
    ]);
    expect((await t.stores.runs.getRun(runId))?.status).toBe('completed');
    // ...and a restart takes it to post it.
    const restarted = await t.another({ ownerIsGone: (owner) => owner === t.ctx.owner });
    const [row] = await t.db.read(function* () {
      return yield* rows(sql`select created_at from deliveries`);
    });
    // Owed since the run ended: what the thread shows of it from then on is not posted again.
    expect(await restarted.stores.deliveries.takeDue({ surface: 'slack' }, Date.now())).toEqual([
      {
        kind: 'reply',
        runId,
        thread,
        text: 'All done here.',
        attempts: 0,
        owedSince: Number(row?.created_at),
        shown: false,
      },
    ]);
  });
});
