import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ToolRegistry } from '../../src/agent/tool-registry.js';
import { ApprovalService } from '../../src/approvals/approval-service.js';
import { Deciders } from '../../src/approvals/deciders.js';
import { count } from '../../src/db/sql/program.js';
import { createBuiltInTools } from '../../src/tools/built-in-tools.js';
import { openTestStores, type TestStores } from '../support/test-database.js';
import { createTestRunner, scripted, startRun, thread, usage } from './runner-rig.js';

/**
 * A request is reached from its own workspace, or on Enterprise Grid from a workspace of its organisation; from
 * anywhere else it is as unknown as a forged ID, and the attempt is audited in the person's own workspace.
 */
describe('which workspaces reach a request', () => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores('sqlite');
  });
  afterEach(() => t.close());

  async function pendingRequest(enterpriseId: string | null) {
    const { stores, ctx } = t;
    const tools = new ToolRegistry(
      createBuiltInTools({
        clock: ctx.clock,
        notes: stores.notes,
        poster: { post: async () => ({ kind: 'posted' as const }), postText: async () => {} },
      }),
    );
    const model = scripted([
      { text: null, toolCalls: [{ callId: 'c1', name: 'create_note', arguments: '{"text":"x"}' }], usage },
      { text: 'Done.', toolCalls: [], usage },
    ]);
    const runner = createTestRunner(t, { model, tools });
    const conversationId = await stores.conversations.findOrCreate(thread, 'slack');
    await ctx.db.write(function* () {
      yield* count(
        sql`update conversations set enterprise_id = ${enterpriseId} where id = ${conversationId}`,
      );
    });
    const { runId } = await startRun(stores.conversations, conversationId, 'note x');
    const paused = await runner.advance(runId);
    if (paused.kind !== 'paused' || !paused.approvals[0]) throw new Error(`expected a pause: ${paused.kind}`);
    const approvals = new ApprovalService({
      store: stores.approvals,
      clock: ctx.clock,
      deciders: new Deciders({ clock: ctx.clock, adminUserIds: ['UADMIN'] }),
    });
    return { approval: paused.approvals[0], approvals };
  }

  const refusals = async () =>
    (await t.stores.auditQueries.chain()).filter((e) => e.kind === 'approval.refused');

  it("a click from another workspace naming a request's ID is refused as an unknown ID, audited in the clicker's workspace", async () => {
    const { approval, approvals } = await pendingRequest(null);
    const forged = { userId: 'UT2', teamId: 'T2', channelId: thread.channelId, vote: 'approve' as const };
    const other = await approvals.decide({ ...forged, approvalId: approval.id, reason: null });
    const unknown = await approvals.decide({ ...forged, approvalId: 'apr_0000000000000000', reason: null });
    expect(other).toEqual({ ok: false, kind: 'not_found' });
    expect(unknown).toEqual(other);
    expect((await t.stores.approvals.get(approval.id))?.status).toBe('pending');
    const [first, second] = await refusals();
    expect(first).toMatchObject({
      actor: 'UT2',
      teamId: 'T2',
      conversationId: null,
      runId: null,
      approvalId: null,
      payload: { reason: 'unknown_request', requested: approval.id, vote: 'approve' },
    });
    // The two refusals differ only by the ID sent: nothing tells a request of another workspace from none.
    expect({ ...second, payload: { ...second?.payload, requested: approval.id } }).toMatchObject({
      teamId: 'T2',
      approvalId: null,
      payload: first?.payload,
    });
    // Nothing of T1's request reaches T2's log.
    const t2 = await t.stores.auditQueries.events({ teamId: 'T2' });
    expect(t2.map((e) => [e.kind, e.tool, e.approvalStatus])).toEqual([
      ['approval.refused', null, null],
      ['approval.refused', null, null],
    ]);
  });

  it('on Enterprise Grid a workspace of the same organisation decides by the same rules; another organisation cannot reach it', async () => {
    const { approval, approvals } = await pendingRequest('E1');
    expect(approval.enterpriseId).toBe('E1');
    const click = {
      userId: 'UT2',
      teamId: 'T2',
      vote: 'approve' as const,
      reason: null,
      approvalId: approval.id,
    };
    // From another organisation, or from none: unknown.
    expect(await approvals.decide({ ...click, enterpriseId: 'E2', channelId: thread.channelId })).toEqual({
      ok: false,
      kind: 'not_found',
    });
    expect(await approvals.decide({ ...click, channelId: thread.channelId })).toEqual({
      ok: false,
      kind: 'not_found',
    });
    // Same organisation, outside the conversation: the rule (anyone in the conversation) refuses, as it would in T1.
    const outside = await approvals.decide({ ...click, enterpriseId: 'E1', channelId: 'COTHER' });
    expect(outside).toMatchObject({ ok: false, kind: 'not_allowed' });
    // Same organisation, in the shared channel of the conversation: decided, recorded in T1 with where from.
    const shared = await approvals.decide({ ...click, enterpriseId: 'E1', channelId: thread.channelId });
    expect(shared).toMatchObject({ ok: true, kind: 'decided' });
    const approved = (await t.stores.auditQueries.chain()).find((e) => e.kind === 'approval.approved');
    expect(approved).toMatchObject({ teamId: 'T1', actor: 'UT2', payload: { fromTeam: 'T2' } });
  });
});
