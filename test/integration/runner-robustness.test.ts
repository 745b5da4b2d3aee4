import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ChatModel } from '../../src/agent/model.js';
import { UNEXPECTED_FAILURE } from '../../src/agent/run-ending.js';
import { type AgentTool, defineTool } from '../../src/agent/tool.js';
import { ToolRegistry } from '../../src/agent/tool-registry.js';
import type { ToolPolicy } from '../../src/approvals/approval.js';
import { ApprovalService } from '../../src/approvals/approval-service.js';
import { Deciders } from '../../src/approvals/deciders.js';
import {
  type ApprovalPolicy,
  BASE_TOOL_POLICY,
  BUILT_IN_TOOL_POLICIES,
  createPolicy,
} from '../../src/approvals/policy.js';
import { TERMINAL_TEAM_ID, terminalThread } from '../../src/cli/terminal-thread.js';
import { LandedCardUpdates } from '../../src/conversations/landed-card-updates.js';
import { ThreadDelivery } from '../../src/conversations/thread-delivery.js';
import { count, rows } from '../../src/db/sql/program.js';
import { silentLogger } from '../../src/logger.js';
import { createBuiltInTools } from '../../src/tools/built-in-tools.js';
import { seedApproval } from '../support/audit-seed.js';
import { openTestStores, type TestStores } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import {
  answer,
  calls,
  createTestRunner,
  type ProcessStores,
  scripted,
  startRun,
  thread,
} from './runner-rig.js';

const testPolicy = () => createPolicy(BASE_TOOL_POLICY, BUILT_IN_TOOL_POLICIES, 'test');

/** The approval service of the process `on`: a decision that settles a turn leases the run to that process. */
const approvalsOf = (on: ProcessStores) =>
  new ApprovalService({
    store: on.stores.approvals,
    clock: on.ctx.clock,
    deciders: new Deciders({ clock: on.ctx.clock, adminUserIds: [] }),
  });

describe('runner robustness on a real SQLite database', () => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores('sqlite');
  });
  afterEach(() => t.close());

  async function setup(
    model: ChatModel,
    options: { extraTools?: AgentTool[]; policy?: ApprovalPolicy } = {},
  ) {
    const { stores, ctx } = t;
    const tools = new ToolRegistry([
      ...createBuiltInTools({
        clock: ctx.clock,
        notes: stores.notes,
        poster: { post: async () => ({ kind: 'posted' as const }), postText: async () => {} },
      }),
      ...(options.extraTools ?? []),
    ]);
    const runner = createTestRunner(t, { model, tools, policy: options.policy ?? testPolicy() });
    const approvals = approvalsOf(t);
    const conversationId = await stores.conversations.findOrCreate(thread, 'slack');
    const start = (text: string, userId = 'U1') =>
      startRun(stores.conversations, conversationId, text, userId);
    const approve = (approvalId: string, userId = 'U2') =>
      approvals.decide({ approvalId, userId, teamId: 'T1', channelId: 'C1', vote: 'approve', reason: null });
    return { runner, runStore: stores.runs, approvals, approve, start, notes: stores.notes, conversationId };
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
    const s = await setup(scripted([calls(['c1', 'flaky', '{}'])]), { extraTools: [flaky] });
    const { runId } = await s.start('go');
    // While a run works (and waits for nobody), a new message is queued, but not "behind an approval".
    expect((await s.start('meanwhile')).started).toBe('queued');
    expect(await s.runner.advance(runId)).toMatchObject({ kind: 'failed', message: UNEXPECTED_FAILURE });
    expect((await s.runStore.getRun(runId))?.status).toBe('failed');
    expect((await s.start('next message')).started).toBe('started');
  });

  it('a server that reuses call ids across turns: every call keeps a key of its own and the run completes', async () => {
    const s = await setup(
      scripted([
        calls(['call_0', 'create_note', '{"text":"a"}']),
        calls(['call_0', 'create_note', '{"text":"b"}'], ['', 'get_current_time', '{"timeZone":"UTC"}']),
        answer('Two notes.'),
      ]),
    );
    const { runId } = await s.start('two notes');
    for (let round = 0; round < 2; round += 1) {
      const outcome = await s.runner.advance(runId);
      if (outcome.kind !== 'paused' || !outcome.approvals[0])
        throw new Error(`round ${round}: ${outcome.kind}`);
      await s.approve(outcome.approvals[0].id);
    }
    expect(await s.runner.advance(runId)).toEqual({ kind: 'completed', text: 'Two notes.' });
    const ids = (await s.runStore.loadHistory(s.conversationId)).flatMap((item) =>
      item.kind === 'tool_call' ? [item.data.callId] : [],
    );
    expect(ids).toHaveLength(3);
    expect(new Set(ids).size).toBe(3);
    expect(ids.every((id) => id !== '')).toBe(true);
    expect((await s.notes.list('T1')).map((note) => note.text)).toEqual(['a', 'b']);
  });

  it('"approve for this thread" never approves its grantor’s own request where self-approval is not allowed', async () => {
    const strict: ToolPolicy = {
      requireApproval: true,
      rule: { ...BASE_TOOL_POLICY.rule, allowSelfApproval: false },
    };
    const policy = createPolicy(BASE_TOOL_POLICY, { ...BUILT_IN_TOOL_POLICIES, create_note: strict }, 'test');
    const s = await setup(scripted([calls(['c1', 'create_note', '{"text":"mine"}'])]), { policy });
    await t.db.write(function* () {
      yield* count(sql`insert into standing_approvals (conversation_id, tool_name, granted_by,
        origin_approval_id, granted_at) values (${s.conversationId}, 'create_note', 'U2', 'apr_x', 1)`);
    });
    const { runId } = await s.start('my own note', 'U2');
    expect(await s.runner.advance(runId)).toMatchObject({ kind: 'paused' });
    expect(await s.notes.list('T1')).toEqual([]);
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
    const s = await setup(
      scripted([
        calls(['c1', 'create_note', '{"text":"x"}'], ['c2', 'slow_lookup', '{}']),
        answer('Both done.'),
      ]),
      { extraTools: [slow] },
    );
    const { runId } = await s.start('note and lookup');
    decide = async () => {
      const [pending] = await t.db.read(function* () {
        return yield* rows(sql`select id from approvals where status = 'pending'`);
      });
      if (typeof pending?.id === 'string') await s.approve(pending.id);
    };
    expect(await s.runner.advance(runId)).toEqual({ kind: 'completed', text: 'Both done.' });
    expect((await s.notes.list('T1')).map((note) => note.text)).toEqual(['x']);
  });
});

describe('a crash between storing a turn and pausing it', () => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores('sqlite');
  });
  afterEach(() => t.close());

  it('the restarted drive runs what needs nobody, pauses, and the decision then completes the run', async () => {
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
    const model = scripted([
      calls(['c1', 'create_note', '{"text":"x"}'], ['c2', 'lookup', '{}']),
      answer('Done.'),
    ]);
    const make = (on: ProcessStores) =>
      createTestRunner(on, {
        model,
        tools: new ToolRegistry([
          ...createBuiltInTools({
            clock: on.ctx.clock,
            notes: on.stores.notes,
            poster: { post: async () => ({ kind: 'posted' as const }), postText: async () => {} },
          }),
          lookup,
        ]),
        policy: testPolicy(),
      });
    const conversationId = await t.stores.conversations.findOrCreate(thread, 'slack');
    const { runId } = await startRun(t.stores.conversations, conversationId, 'go');
    void make(t).advance(runId);
    await waitUntil(() => lookups === 1);
    // Restart: the run is still `running` with a request waiting; the new process takes it over, and its drive
    // must pause it, not leave it.
    const restarted = await t.another({ ownerIsGone: (owner) => owner === t.ctx.owner });
    const claimed = await restarted.stores.recovery.claimAbandonedRuns({ surface: 'slack' });
    expect(claimed.map((c) => c.runId)).toEqual([runId]);
    expect(await make(restarted).advance(runId)).toEqual({ kind: 'waiting' });
    const runs = restarted.stores.runs;
    expect((await runs.getRun(runId))?.status).toBe('paused');
    const [pending] = await runs.approvalsForTurn(runId, 1);
    if (!pending) throw new Error('no approval');
    const decision = await approvalsOf(restarted).decide({
      approvalId: pending.id,
      userId: 'U2',
      teamId: 'T1',
      channelId: 'C1',
      vote: 'approve',
      reason: null,
    });
    expect(decision).toMatchObject({ kind: 'decided', runClaimed: true });
    expect(await make(restarted).advance(runId)).toEqual({ kind: 'completed', text: 'Done.' });
    expect((await restarted.stores.notes.list('T1')).map((note) => note.text)).toEqual(['x']);
    expect(lookups).toBe(2);
  });
});

describe('retrying what Slack refuses', () => {
  const INTERVAL = 1000;
  const START = 1_700_000_000_000;
  let now = START;
  let t: TestStores;
  beforeEach(async () => {
    now = START;
    t = await openTestStores('sqlite', { clock: { now: () => now } });
  });
  afterEach(() => t.close());

  it('a card Slack keeps refusing is tried less and less often, and posted once Slack takes it', async () => {
    const runner = createTestRunner(t, {
      model: scripted([calls(['c1', 'create_note', '{"text":"x"}'])]),
      tools: createBuiltInTools({
        clock: t.ctx.clock,
        notes: t.stores.notes,
        poster: { post: async () => ({ kind: 'posted' as const }), postText: async () => {} },
      }),
    });
    const conversationId = await t.stores.conversations.findOrCreate(thread, 'slack');
    const { runId } = await startRun(t.stores.conversations, conversationId, 'x');
    const paused = await runner.advance(runId);
    if (paused.kind !== 'paused' || !paused.approvals[0])
      throw new Error(`expected a pause, got ${paused.kind}`);
    const approvalId = paused.approvals[0].id;
    let refusing = true;
    const triedAt: number[] = [];
    const notices: string[] = [];
    const delivery = new ThreadDelivery({
      outbox: t.stores.deliveries,
      landed: new LandedCardUpdates(t.stores.deliveries, silentLogger),
      surfaceKind: 'slack',
      clock: t.ctx.clock,
      logger: silentLogger,
      retryMs: INTERVAL,
      surface: {
        postText: async (_thread, text) => void notices.push(text),
        updateApprovalCard: async () => {},
        async postApprovalCard(approval) {
          triedAt.push((now - START) / INTERVAL);
          if (refusing) throw new Error('channel_not_found');
          return { channelId: approval.channelId, messageTs: '1700000000.000001' };
        },
      },
    });
    const retryEveryIntervalUntil = async (last: number) => {
      for (let tick = (now - START) / INTERVAL; tick <= last; tick += 1) {
        now = START + tick * INTERVAL;
        await delivery.retry();
      }
    };
    // The process that paused the run posts the card at once, as the conversation service does.
    await delivery.postCards(paused.approvals);
    now += INTERVAL;
    await retryEveryIntervalUntil(10);
    // Tried after 1, 2 and 4 intervals of waiting, not at every retry.
    expect(triedAt).toEqual([0, 1, 3, 7]);
    // The thread is told once that the card could not be posted.
    expect(notices).toHaveLength(1);
    refusing = false;
    await retryEveryIntervalUntil(40);
    // The next try comes 8 intervals later; it succeeds and the card is owed no more.
    expect(triedAt).toEqual([0, 1, 3, 7, 15]);
    const owed = await t.db.read(function* () {
      return yield* rows(sql`select id from deliveries`);
    });
    expect(owed).toEqual([]);
    expect(await t.stores.approvals.get(approvalId)).toMatchObject({
      status: 'pending',
      messageTs: '1700000000.000001',
    });
  });
});

describe('deadlines of terminal conversations', () => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores('sqlite');
  });
  afterEach(() => t.close());

  it('the Slack bot’s scheduler leaves them to the terminal chat: each expires only its own surface’s requests', async () => {
    const { db, stores } = t;
    const slackConversation = await stores.conversations.findOrCreate(thread, 'slack');
    const terminalConversation = await stores.conversations.findOrCreate(terminalThread('notes'), 'terminal');
    const slackId = await seedApproval(db, { teamId: 'T1' });
    const terminalId = await seedApproval(db, { teamId: TERMINAL_TEAM_ID });
    await db.write(function* () {
      for (const [id, conversationId] of [
        [slackId, slackConversation],
        [terminalId, terminalConversation],
      ] as const) {
        yield* count(
          sql`update approvals set conversation_id = ${conversationId}, expires_at = 1 where id = ${id}`,
        );
      }
    });
    const bySlack = await stores.timers.expireDue(Date.now(), 'slack', () => []);
    expect(bySlack.map((e) => e.approval.id)).toEqual([slackId]);
    expect((await stores.approvals.get(terminalId))?.status).toBe('pending');
    // The terminal chat expires its own.
    const byTerminal = await stores.timers.expireDue(Date.now(), 'terminal', () => []);
    expect(byTerminal.map((e) => e.approval.id)).toEqual([terminalId]);
    expect((await stores.approvals.get(slackId))?.status).toBe('expired');
  });
});
