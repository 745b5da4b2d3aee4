import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChatModel } from '../../src/agent/model.js';
import { UNEXPECTED_FAILURE } from '../../src/agent/runner.js';
import { type AgentTool, defineTool } from '../../src/agent/tool.js';
import { ToolRegistry } from '../../src/agent/tool-registry.js';
import { ApprovalService } from '../../src/approvals/approval-service.js';
import {
  type ApprovalPolicy,
  BASE_TOOL_POLICY,
  BUILT_IN_TOOL_POLICIES,
  createPolicy,
  type ToolPolicy,
} from '../../src/approvals/policy.js';
import { TERMINAL_TEAM_ID } from '../../src/cli/terminal-thread.js';
import { ThreadDelivery } from '../../src/conversations/thread-delivery.js';
import { createApprovalStore } from '../../src/db/approval-store.js';
import { createApprovalTimerStore } from '../../src/db/approval-timer-store.js';
import { createConversationStore } from '../../src/db/conversation-store.js';
import { type OpenDatabase, openDatabase } from '../../src/db/database.js';
import { createNotesStore } from '../../src/db/notes-store.js';
import { createRunStore } from '../../src/db/run-store.js';
import { approvals, standingApprovals } from '../../src/db/schema.js';
import { randomId } from '../../src/ids.js';
import { silentLogger } from '../../src/logger.js';
import { createBuiltInTools } from '../../src/tools/built-in-tools.js';
import { seedApproval } from '../support/audit-seed.js';
import { waitUntil } from '../support/wait.js';
import { answer, calls, clock, createTestRunner, scripted, startRun, thread } from './runner-rig.js';

describe('runner robustness on a real SQLite database', () => {
  let database: OpenDatabase;
  beforeEach(() => {
    database = openDatabase(':memory:');
  });
  afterEach(() => database.close());

  function setup(model: ChatModel, options: { extraTools?: AgentTool[]; policy?: ApprovalPolicy } = {}) {
    const { db } = database;
    const notes = createNotesStore(db, clock);
    const tools = new ToolRegistry([
      ...createBuiltInTools({ clock, notes, poster: { post: async () => {} } }),
      ...(options.extraTools ?? []),
    ]);
    const runStore = createRunStore(db, clock);
    const runner = createTestRunner(db, {
      model,
      tools,
      policy: options.policy ?? createPolicy(BASE_TOOL_POLICY, BUILT_IN_TOOL_POLICIES, 'test'),
      store: runStore,
    });
    const conversations = createConversationStore(db, clock, randomId);
    const approvals = new ApprovalService({ store: createApprovalStore(db, clock), clock, adminUserIds: [] });
    const conversationId = conversations.findOrCreate(thread);
    const start = (text: string, userId = 'U1') => startRun(conversations, conversationId, text, userId);
    const approve = (approvalId: string, userId = 'U2') =>
      approvals.decide({ approvalId, userId, teamId: 'T1', channelId: 'C1', vote: 'approve', reason: null });
    return { runner, runStore, approvals, approve, start, notes, conversationId };
  }

  it('an unexpected error ends the run and cancels what it would still run, so the thread is not blocked', async () => {
    const flaky = defineTool({
      name: 'flaky',
      description: 'its approval predicate throws',
      parameters: z.object({}),
      needsApproval: () => {
        throw new Error('predicate exploded');
      },
      execute: () => 'never',
    });
    const t = setup(scripted([calls(['c1', 'flaky', '{}'])]), { extraTools: [flaky] });
    const { runId } = t.start('go');
    // While a run works (and waits for nobody), a new message is queued, but not "behind an approval".
    expect(t.start('meanwhile').started).toBe('queued');
    expect(await t.runner.advance(runId)).toMatchObject({ kind: 'failed', message: UNEXPECTED_FAILURE });
    expect(t.runStore.getRun(runId)?.status).toBe('failed');
    expect(t.start('next message').started).toBe('started');
  });

  it('a server that reuses call ids across turns: every call keeps a key of its own and the run completes', async () => {
    const t = setup(
      scripted([
        calls(['call_0', 'create_note', '{"text":"a"}']),
        calls(['call_0', 'create_note', '{"text":"b"}'], ['', 'get_current_time', '{"timeZone":"UTC"}']),
        answer('Two notes.'),
      ]),
    );
    const { runId } = t.start('two notes');
    for (let round = 0; round < 2; round += 1) {
      const outcome = await t.runner.advance(runId);
      if (outcome.kind !== 'paused' || !outcome.approvals[0])
        throw new Error(`round ${round}: ${outcome.kind}`);
      await t.approve(outcome.approvals[0].id);
    }
    expect(await t.runner.advance(runId)).toEqual({ kind: 'completed', text: 'Two notes.' });
    const ids = t.runStore
      .loadHistory(t.conversationId)
      .flatMap((item) => (item.kind === 'tool_call' ? [item.data.callId] : []));
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    expect(ids.every((id) => id !== '')).toBe(true);
    expect(t.notes.list('T1').map((note) => note.text)).toEqual(['a', 'b']);
  });

  it('"approve for this thread" never approves its grantor’s own request where self-approval is not allowed', async () => {
    const strict: ToolPolicy = {
      requireApproval: true,
      rule: { ...BASE_TOOL_POLICY.rule, allowSelfApproval: false },
    };
    const policy = createPolicy(BASE_TOOL_POLICY, { ...BUILT_IN_TOOL_POLICIES, create_note: strict }, 'test');
    const t = setup(scripted([calls(['c1', 'create_note', '{"text":"mine"}'])]), { policy });
    database.db
      .insert(standingApprovals)
      .values({
        conversationId: t.conversationId,
        toolName: 'create_note',
        grantedBy: 'U2',
        originApprovalId: 'apr_x',
        grantedAt: 1,
      })
      .run();
    const { runId } = t.start('my own note', 'U2');
    expect(await t.runner.advance(runId)).toMatchObject({ kind: 'paused' });
    expect(t.notes.list('T1')).toEqual([]);
  });

  it('a request decided while the turn’s other calls ran is settled by the same drive, not left unclaimed', async () => {
    let decide: (() => Promise<unknown>) | undefined;
    const slow = defineTool({
      name: 'slow_lookup',
      description: 'needs no approval; meanwhile someone decides the other call (from App Home, say)',
      parameters: z.object({}),
      execute: async () => {
        await decide?.();
        return 'looked up';
      },
    });
    const t = setup(
      scripted([
        calls(['c1', 'create_note', '{"text":"x"}'], ['c2', 'slow_lookup', '{}']),
        answer('Both done.'),
      ]),
      { extraTools: [slow] },
    );
    const { runId } = t.start('note and lookup');
    decide = async () => {
      const [pending] = database.db.query.approvals.findMany().sync();
      if (pending) await t.approve(pending.id);
    };
    expect(await t.runner.advance(runId)).toEqual({ kind: 'completed', text: 'Both done.' });
    expect(t.notes.list('T1').map((note) => note.text)).toEqual(['x']);
  });
});

describe('a crash between storing a turn and pausing it', () => {
  it('the restarted drive runs what needs nobody, pauses, and the decision then completes the run', async () => {
    const database = openDatabase(':memory:');
    let lookups = 0;
    const lookup = defineTool({
      name: 'lookup',
      description: 'needs no approval; the first time, the process dies while it runs',
      parameters: z.object({}),
      execute: () => {
        lookups += 1;
        return lookups === 1 ? new Promise<string>(() => {}) : 'found';
      },
    });
    const { db } = database;
    const notes = createNotesStore(db, clock);
    const model = scripted([
      calls(['c1', 'create_note', '{"text":"x"}'], ['c2', 'lookup', '{}']),
      answer('Done.'),
    ]);
    const make = () =>
      createTestRunner(db, {
        model,
        tools: new ToolRegistry([
          ...createBuiltInTools({ clock, notes, poster: { post: async () => {} } }),
          lookup,
        ]),
        policy: createPolicy(BASE_TOOL_POLICY, BUILT_IN_TOOL_POLICIES, 'test'),
      });
    const conversations = createConversationStore(db, clock, randomId);
    const conversationId = conversations.findOrCreate(thread);
    const { runId } = startRun(conversations, conversationId, 'go');
    void make().advance(runId);
    await waitUntil(() => lookups === 1);
    // Restart: the run is still `running` with a request waiting; the new drive must pause it, not leave it.
    expect(await make().advance(runId)).toEqual({ kind: 'waiting' });
    const runs = createRunStore(db, clock);
    expect(runs.getRun(runId)?.status).toBe('paused');
    const [pending] = runs.approvalsForTurn(runId, 1);
    if (!pending) throw new Error('no approval');
    const approvals = new ApprovalService({ store: createApprovalStore(db, clock), clock, adminUserIds: [] });
    const decision = await approvals.decide({
      approvalId: pending.id,
      userId: 'U2',
      teamId: 'T1',
      channelId: 'C1',
      vote: 'approve',
      reason: null,
    });
    expect(decision).toMatchObject({ kind: 'decided', runClaimed: true });
    expect(await make().advance(runId)).toEqual({ kind: 'completed', text: 'Done.' });
    expect(notes.list('T1').map((note) => note.text)).toEqual(['x']);
    database.close();
  });
});

describe('retrying what Slack refuses', () => {
  it('a card Slack keeps refusing is tried in fewer and fewer rounds, and posted once Slack takes it', async () => {
    const database = openDatabase(':memory:');
    const { db } = database;
    const runner = createTestRunner(db, {
      model: scripted([calls(['c1', 'create_note', '{"text":"x"}'])]),
      tools: createBuiltInTools({
        clock,
        notes: createNotesStore(db, clock),
        poster: { post: async () => {} },
      }),
    });
    const store = createConversationStore(db, clock, randomId);
    const conversationId = store.findOrCreate(thread);
    const { runId } = startRun(store, conversationId, 'x');
    expect(await runner.advance(runId)).toMatchObject({ kind: 'paused' });
    let refusing = true;
    let attempts = 0;
    const delivery = new ThreadDelivery({
      store,
      clock,
      logger: silentLogger,
      surface: {
        postText: async () => {},
        updateApprovalCard: async () => {},
        async postApprovalCard(approval) {
          attempts += 1;
          if (refusing) throw new Error('channel_not_found');
          return { channelId: approval.channelId, messageTs: '1700000000.000001' };
        },
      },
    });
    for (let round = 1; round <= 10; round += 1) await delivery.retry();
    // Tried in rounds 1, 2, 4 and 8 only.
    expect(attempts).toBe(4);
    refusing = false;
    for (let round = 11; round <= 16; round += 1) await delivery.retry();
    expect(attempts).toBe(5);
    expect(store.approvalsWithoutCard()).toEqual([]);
    database.close();
  });
});

describe('deadlines of terminal conversations', () => {
  it('the Slack bot’s scheduler leaves them to the terminal chat: it expires only its own workspaces’ requests', () => {
    const database = openDatabase(':memory:');
    const slackId = seedApproval(database.db, { teamId: 'T1' });
    const terminalId = seedApproval(database.db, { teamId: TERMINAL_TEAM_ID });
    database.db.update(approvals).set({ expiresAt: 1 }).run();
    const expired = createApprovalTimerStore(database.db, TERMINAL_TEAM_ID).expireDue(Date.now(), () => []);
    expect(expired.map((e) => e.approval.id)).toEqual([slackId]);
    expect(expired.map((e) => e.approval.id)).not.toContain(terminalId);
    database.close();
  });
});
