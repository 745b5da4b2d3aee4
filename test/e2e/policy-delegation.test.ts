import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import type { SlackCall } from '../support/fake-slack.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import { postInteraction } from '../support/slack-requests.js';
import { DATABASE_KINDS } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { approvalIdOf, cardTs, type Harness, SECRET } from './harness.js';
import { blocksText, FakeClock, HOUR, query, startPolicyHarness } from './policy-support.js';

const POLICY = { tools: { create_note: { approvers: ['U0ALICE'], allowSelfApproval: false } } };

describe.each(DATABASE_KINDS)('delegation on %s: /approvals delegate, delegations, undelegate', (kind) => {
  const open: Harness[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });
  const start = async (clock: FakeClock) => {
    const h = await startPolicyHarness(POLICY, { overrides: { clock }, kind });
    open.push(h);
    return h;
  };
  const said = async (h: Harness, text: string, user: string) =>
    String((await h.approvals(text, user)).params.text);
  const ephemerals = (h: Harness) => h.slack.callsTo('chat.postEphemeral').map((c) => String(c.params.text));
  const auditOf = async (h: Harness, kind: string) =>
    (
      await query(h.database, `SELECT actor, payload FROM audit_events WHERE kind = '${kind}' ORDER BY seq`)
    ).map((row) => ({ actor: row.actor, ...JSON.parse(String(row.payload)) }));

  async function request(h: Harness, user: string, n: number): Promise<SlackCall> {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: `note ${n}` } }]),
      reply.text(`Done ${n}.`),
    );
    await h.mention(`note ${n}`, { user });
    const cards = await h.waitForCards(n);
    const card = cards[n - 1];
    if (!card) throw new Error('no card');
    return card;
  }

  it('a delegate decides for the delegator, the card and the log name both; self-approval still applies; undelegate ends it', async () => {
    const clock = new FakeClock(); // 2026-01-05 09:00 UTC
    const h = await start(clock);
    expect(await said(h, 'delegate <@U0EVE> until:2026-01-06', 'U0NOBODY')).toBe(
      'Only people who may decide approval requests can delegate deciding.',
    );
    expect(await said(h, 'delegate <@U0BOB> until:2026-01-06', 'U0ALICE')).toBe(
      'Delegated: <@U0BOB> may decide what you may decide until the end of 2026-01-06 (UTC). End it with `/approvals undelegate <@U0BOB>`.',
    );
    expect(await said(h, 'delegations', 'U0ALICE')).toContain(
      '• <@U0BOB> decides for you until the end of 2026-01-06',
    );
    expect(await said(h, 'delegations', 'U0BOB')).toContain(
      '• You decide for <@U0ALICE> until the end of 2026-01-06',
    );

    const card = await request(h, 'U1', 1);
    await h.click(card, 'approve', 'U0BOB');
    await h.waitForText((t) => t === 'Done 1.');
    const update = await h.slack.waitForCall('chat.update', (c) => c.params.ts === cardTs(card));
    expect(blocksText(update)).toContain('Approved by <@U0BOB> (for <@U0ALICE>)');
    expect(await auditOf(h, 'approval.approved')).toEqual([
      expect.objectContaining({ actor: 'U0BOB', onBehalfOf: 'U0ALICE' }),
    ]);
    expect(await auditOf(h, 'delegation.used')).toEqual([
      expect.objectContaining({ actor: 'U0BOB', delegator: 'U0ALICE', delegate: 'U0BOB', vote: 'approve' }),
    ]);
    expect(await auditOf(h, 'delegation.granted')).toEqual([
      {
        actor: 'U0ALICE',
        delegationId: expect.any(String),
        delegator: 'U0ALICE',
        delegate: 'U0BOB',
        until: '2026-01-07T00:00:00.000Z',
      },
    ]);

    // Bob's own request: the rule forbids self-approval, and a delegation does not lift that.
    const own = await request(h, 'U0BOB', 2);
    await h.click(own, 'approve', 'U0BOB');
    await waitUntil(() => ephemerals(h)[0]);
    expect(ephemerals(h)[0]).toContain(
      'You asked for this, and create_note cannot be approved by the person who asked.',
    );
    await h.click(own, 'approve', 'U0ALICE');
    await h.waitForText((t) => t === 'Done 2.');

    expect(await said(h, 'undelegate <@U0BOB>', 'U0ALICE')).toBe(
      'Ended: <@U0BOB> no longer decides for you.',
    );
    expect(await auditOf(h, 'delegation.ended')).toEqual([
      expect.objectContaining({ actor: 'U0ALICE', delegator: 'U0ALICE', delegate: 'U0BOB' }),
    ]);
    const after = await request(h, 'U1', 3);
    await h.click(after, 'approve', 'U0BOB');
    await waitUntil(() => ephemerals(h)[1]);
    expect(ephemerals(h)[1]).toBe('You cannot decide this request. It can be decided by <@U0ALICE>.');
    expect(await query(h.database, "SELECT status FROM approvals WHERE status = 'pending'")).toHaveLength(1);
  });

  it("a delegate's Approve for this thread covers later calls while the delegation is in force", async () => {
    const clock = new FakeClock();
    const h = await start(clock);
    await said(h, 'delegate <@U0BOB> until:2026-01-06', 'U0ALICE');
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'one' } }]),
      reply.text('One added.'),
    );
    const ts = await h.mention('add one', { user: 'U1' });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.click(card, 'approve_thread', 'U0BOB');
    await h.waitForText((t) => t === 'One added.');

    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'two' } }]),
      reply.text('Two added.'),
    );
    await h.message('add two', { user: 'U1', threadTs: ts });
    await h.waitForText((t) => t === 'Two added.');
    expect(h.texts()).toContain('`create_note` auto-approved (approved for this thread by <@U0BOB>)');
    expect(h.cards()).toHaveLength(1);

    // Once the delegation ends, so does what the delegate granted: the next call waits for a person.
    await said(h, 'undelegate <@U0BOB>', 'U0ALICE');
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'three' } }]));
    await h.message('add three', { user: 'U1', threadTs: ts });
    await h.waitForCards(2);
  });

  it("one person's say counts once: neither the delegator nor a second delegate adds to a vote cast for them", async () => {
    const clock = new FakeClock();
    const h = await startPolicyHarness(
      { tools: { create_note: { approvers: ['U0ALICE', 'U0CAROL'], quorum: 2 } } },
      { overrides: { clock }, kind },
    );
    open.push(h);
    await said(h, 'delegate <@U0BOB> until:2026-01-06', 'U0ALICE');
    await said(h, 'delegate <@U0DAN> until:2026-01-06', 'U0ALICE');
    const card = await request(h, 'U1', 1);
    await h.click(card, 'approve', 'U0BOB');
    await h.slack.waitForCall('chat.update', (c) => c.params.ts === cardTs(card));

    await h.click(card, 'approve', 'U0ALICE');
    await waitUntil(() => ephemerals(h)[0]);
    await h.click(card, 'approve', 'U0DAN');
    await waitUntil(() => ephemerals(h)[1]);
    expect(ephemerals(h)).toEqual([
      'You have already voted on this request; it needs approvals from other people.',
      'You have already voted on this request; it needs approvals from other people.',
    ]);
    expect(await query(h.database, 'SELECT status FROM approvals')).toEqual([{ status: 'pending' }]);

    await h.click(card, 'approve', 'U0CAROL');
    await h.waitForText((t) => t === 'Done 1.');
    expect(await query(h.database, 'SELECT status, decided_by FROM approvals')).toEqual([
      { status: 'executed', decided_by: 'U0BOB,U0CAROL' },
    ]);
  });

  it('a delegate finds the requests they may decide in App Home, where the thread card has no buttons (notify: dm)', async () => {
    const clock = new FakeClock();
    const h = await startPolicyHarness(
      { tools: { create_note: { approvers: ['U0ALICE'], notify: ['dm'] } } },
      { overrides: { clock }, kind },
    );
    open.push(h);
    await said(h, 'delegate <@U0BOB> until:2026-01-06', 'U0ALICE');
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'one' } }]),
      reply.text('One added.'),
    );
    await h.mention('add one', { user: 'U1' });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const approvalId = approvalIdOf(card);
    const homes = () => h.slack.callsTo('views.publish').filter((c) => c.params.user_id === 'U0BOB');
    await h.sendEvent({ type: 'app_home_opened', user: 'U0BOB', channel: 'D0HOME', tab: 'home' });
    const [home] = await waitUntil(() => (homes().length === 1 ? homes() : undefined));
    const view = JSON.stringify(home?.params.view);
    expect(view).toContain('Waiting for your decision (1)');
    expect(view).toContain(`"style":"primary","value":"${approvalId}"`);

    // A click in Home has no channel and no message: decided through the delegation.
    const {
      channel: _c,
      message: _m,
      ...payload
    } = blockActionsPayload({
      userId: 'U0BOB',
      channelId: 'unused',
      messageTs: 'unused',
      actionId: 'approval:approve',
      value: approvalId,
    });
    await postInteraction(h.url, SECRET, {
      ...payload,
      container: { type: 'view', view_id: 'VHOME' },
      view: { id: 'VHOME', type: 'home', blocks: [] },
    });
    await h.waitForText((t) => t === 'One added.');
    expect(await auditOf(h, 'approval.approved')).toEqual([
      expect.objectContaining({ actor: 'U0BOB', onBehalfOf: 'U0ALICE' }),
    ]);
  });

  it('a delegation ends with its last day', async () => {
    const clock = new FakeClock();
    const h = await start(clock);
    await said(h, 'delegate <@U0BOB> until:2026-01-05', 'U0ALICE');
    expect(await said(h, 'delegate <@U0BOB> until:2026-01-04', 'U0ALICE')).toContain('is in the past');
    clock.advance(15 * HOUR); // 2026-01-06 00:00 UTC
    expect(await said(h, 'delegations', 'U0BOB')).toBe('No delegations in force.');
    const card = await request(h, 'U1', 1);
    await h.click(card, 'approve', 'U0BOB');
    await waitUntil(() => ephemerals(h)[0]);
    expect(ephemerals(h)[0]).toBe('You cannot decide this request. It can be decided by <@U0ALICE>.');
    expect(await auditOf(h, 'delegation.used')).toEqual([]);
  });
});
