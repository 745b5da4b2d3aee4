import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChatModel } from '../../src/agent/model.js';
import { defineTool } from '../../src/agent/tool.js';
import { ToolRegistry } from '../../src/agent/tool-registry.js';
import { ApprovalService } from '../../src/approvals/approval-service.js';
import { createApprovalStore } from '../../src/db/approval-store.js';
import { createConversationStore } from '../../src/db/conversation-store.js';
import { type OpenDatabase, openDatabase } from '../../src/db/database.js';
import { createNotesStore } from '../../src/db/notes-store.js';
import { createRunStore } from '../../src/db/run-store.js';
import { auditEvents, standingApprovals } from '../../src/db/schema.js';
import { randomId } from '../../src/ids.js';
import { createBuiltInTools } from '../../src/tools/built-in-tools.js';
import { waitUntil } from '../support/wait.js';
import { answer, clock, createTestRunner, scripted, startRun, thread, usage } from './runner-rig.js';

const call = (name: string, args: string, callId = `call_${name}`) => ({ callId, name, arguments: args });

describe('runner and stores on a real SQLite database', () => {
  let database: OpenDatabase;
  let executed: string[];

  beforeEach(() => {
    database = openDatabase(':memory:');
    executed = [];
  });
  afterEach(() => database.close());

  function setup(model: ChatModel) {
    const { db } = database;
    const tools = new ToolRegistry(
      createBuiltInTools({
        clock,
        notes: createNotesStore(db, clock),
        poster: { post: async (c) => void executed.push(c) },
      }),
    );
    const runStore = createRunStore(db, clock);
    const runner = createTestRunner(db, { model, tools, store: runStore });
    const conversations = createConversationStore(db, clock, randomId);
    const approvals = new ApprovalService({
      store: createApprovalStore(db, clock),
      clock,
      adminUserIds: ['UADMIN'],
    });
    const start = (text: string) => startRun(conversations, conversations.findOrCreate(thread), text).runId;
    return { runner, approvals, start, runStore };
  }

  it('arguments that are not JSON still need approval, and approving them runs nothing', async () => {
    const model = scripted([
      { text: null, toolCalls: [call('create_note', '{"text": "oops"')], usage },
      { text: 'I could not parse that.', toolCalls: [], usage },
    ]);
    const { runner, approvals, start, runStore } = setup(model);
    const runId = start('add a note');
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
    const outputs = runStore.loadHistory(approval.conversationId).filter((i) => i.kind === 'tool_output');
    expect(outputs.map((o) => o.data)).toEqual([
      expect.objectContaining({ status: 'error', output: expect.stringContaining('not valid JSON') }),
    ]);
    expect(createNotesStore(database.db, clock).list('T1')).toEqual([]);
  });

  it('the turn counter carries across resumes: maxTurns bounds the whole run', async () => {
    const gated = (i: number) => ({
      text: null,
      toolCalls: [call('create_note', `{"text":"n${i}"}`, `c${i}`)],
      usage,
    });
    const model = scripted([gated(1), gated(2), gated(3)]);
    const { db } = database;
    const tools = new ToolRegistry(
      createBuiltInTools({ clock, notes: createNotesStore(db, clock), poster: { post: async () => {} } }),
    );
    const runner = createTestRunner(db, { model, tools, limits: { maxTurns: 2, maxApprovalRounds: 5 } });
    const { approvals, start } = setup(model);
    const runId = start('loop');
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
    const { runner, approvals, start, runStore } = setup(model);
    const runId = start('note');
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
    expect(runStore.markExecuting(approvalId, [])).toBe(true);
    expect(runStore.markExecuting(approvalId, [])).toBe(false);
    await runner.advance(runId);
    expect(createNotesStore(database.db, clock).list('T1')).toEqual([]);
    const output = runStore
      .loadHistory(paused.approvals[0].conversationId)
      .find((i) => i.kind === 'tool_output');
    expect(output?.data).toMatchObject({
      status: 'unknown',
      output: expect.stringContaining('outcome of this tool call is unknown'),
    });
    const kinds = database.db
      .select({ kind: auditEvents.kind })
      .from(auditEvents)
      .all()
      .map((e) => e.kind);
    expect(kinds).toContain('tool.outcome_unknown');
  });

  it('policy: delete_note is for admins only and never for the requester; refusals are audited', async () => {
    const model = scripted([{ text: null, toolCalls: [call('delete_note', '{"id":1}')], usage }]);
    const { runner, approvals, start } = setup(model);
    const paused = await runner.advance(start('delete it'));
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
    const refusals = database.db
      .select()
      .from(auditEvents)
      .all()
      .filter((e) => e.kind === 'approval.refused');
    expect(refusals.map((e) => e.actor)).toEqual(['U1', 'U2']);
  });
});

describe('calls are stored before they run', () => {
  it('a call covered by "approve for this thread" that was running when the process died is not run again', async () => {
    const database = openDatabase(':memory:');
    const { db } = database;
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
    const make = () => createTestRunner(db, { model, tools: [hanging] });
    const conversations = createConversationStore(db, clock, randomId);
    const conversationId = conversations.findOrCreate(thread);
    db.insert(standingApprovals)
      .values({
        conversationId,
        toolName: 'create_note',
        grantedBy: 'U2',
        originApprovalId: 'apr_origin',
        grantedAt: 1,
      })
      .run();
    const { runId } = startRun(conversations, conversationId, 'note');
    // The first process runs the auto-approved call and never comes back.
    void make().advance(runId);
    await waitUntil(() => executions === 1);
    // After a restart the run (still `running`) is driven again by a new runner.
    expect(await make().advance(runId)).toEqual({ kind: 'completed', text: 'Told you.' });
    expect(executions).toBe(1);
    expect(model.calls).toBe(2);
    const outputs = createRunStore(db, clock)
      .loadHistory(conversationId)
      .filter((item) => item.kind === 'tool_output');
    expect(outputs.map((item) => item.data.status)).toEqual(['unknown']);
    database.close();
  });
});

describe('the last message of a run', () => {
  it('is owed to the thread in the same transaction that ends the run', async () => {
    const database = openDatabase(':memory:');
    const { db } = database;
    const conversations = createConversationStore(db, clock, randomId);
    const runner = createTestRunner(db, { model: scripted([answer('All done here.')]), tools: [] });
    const conversationId = conversations.findOrCreate(thread);
    const { runId } = startRun(conversations, conversationId, 'hi');
    await runner.advance(runId);
    // Nothing was posted yet (a crash here): the answer is still owed and a restart posts it.
    expect(conversations.pendingReplies()).toEqual([{ runId, conversationId, text: 'All done here.' }]);
    database.close();
  });
});
