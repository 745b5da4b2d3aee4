import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { slackReply } from '../support/fake-slack.js';
import { waitUntil } from '../support/wait.js';
import { rejectWithModal } from './decision-modals.js';
import type { Harness } from './harness.js';
import { blocksText, query, startPolicyHarness } from './policy-support.js';

describe('approval policy: who may decide', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  async function pauseOn(harness: Harness, tool: string, args: Record<string, unknown>, user = 'U1') {
    harness.model.enqueue(reply.toolCalls([{ name: tool, arguments: args }]), reply.text('Finished.'));
    await harness.mention(`please run ${tool}`, { user });
    const [card] = await harness.waitForCards(1);
    if (!card) throw new Error('no card');
    return card;
  }

  const ephemerals = (harness: Harness) =>
    harness.slack
      .callsTo('chat.postEphemeral')
      .map((c) => ({ user: c.params.user, text: String(c.params.text) }));

  it('a click from someone the rule does not allow changes nothing, says who may decide, and is audited', async () => {
    h = await startPolicyHarness({ tools: { delete_note: { approvers: ['admins', 'U0BOSS'] } } });
    const card = await pauseOn(h, 'delete_note', { id: 1 });
    await h.click(card, 'approve', 'U2');
    const notice = await waitUntil(() => ephemerals(h)[0]);
    expect(notice).toEqual({
      user: 'U2',
      text: 'You cannot decide this request. It can be decided by admins or <@U0BOSS>.',
    });
    expect(h.slack.callsTo('chat.update')).toHaveLength(0);
    expect(await query(h.database, 'SELECT status FROM approvals')).toEqual([{ status: 'pending' }]);
    const refused = await query(
      h.database,
      "SELECT actor, payload FROM audit_events WHERE kind = 'approval.refused'",
    );
    expect(refused).toHaveLength(1);
    expect(refused[0]?.actor).toBe('U2');
    expect(JSON.parse(String(refused[0]?.payload))).toMatchObject({
      reason: 'not_an_approver',
      rule: { approvers: ['admins', 'U0BOSS'] },
    });
    await h.click(card, 'approve', 'U0BOSS');
    await h.waitForText((t) => t === 'Finished.');
  });

  it('the requester is refused when allowSelfApproval is false, even as an admin', async () => {
    h = await startPolicyHarness({ tools: { create_note: { allowSelfApproval: false } } });
    const card = await pauseOn(h, 'create_note', { text: 'mine' }, 'UADMIN');
    await h.click(card, 'approve', 'UADMIN');
    const notice = await waitUntil(() => ephemerals(h)[0]);
    expect(notice.text).toBe(
      'You asked for this, and create_note cannot be approved by the person who asked. It can be decided by anyone in the conversation or admins.',
    );
    expect(await query(h.database, 'SELECT status FROM approvals')).toEqual([{ status: 'pending' }]);
    await h.click(card, 'approve', 'U2');
    await h.waitForText((t) => t === 'Finished.');
  });

  it('user groups: members decide, membership is looked up once and cached', async () => {
    h = await startPolicyHarness({ tools: { create_note: { approvers: ['S0REVIEW'] } } });
    h.slack.setResponse('usergroups.users.list', (params) =>
      params.usergroup === 'S0REVIEW'
        ? slackReply.ok({ users: ['U7', 'U8'] })
        : slackReply.error('no_such_subteam'),
    );
    const card = await pauseOn(h, 'create_note', { text: 'grouped' });
    expect(blocksText(card)).toContain('Approvers: <!subteam^S0REVIEW>');
    await h.click(card, 'approve', 'U2');
    const notice = await waitUntil(() => ephemerals(h)[0]);
    expect(notice.text).toBe('You cannot decide this request. It can be decided by <!subteam^S0REVIEW>.');
    await h.click(card, 'approve', 'U8');
    await h.waitForText((t) => t === 'Finished.');
    expect(h.slack.callsTo('usergroups.users.list')).toHaveLength(1);
  });

  it('quorum: the card shows progress, the same person never counts twice, the second approval settles it', async () => {
    h = await startPolicyHarness({ tools: { create_note: { quorum: 2, expiresAfter: '24h' } } });
    const card = await pauseOn(h, 'create_note', { text: 'two keys' });
    expect(blocksText(card)).toContain(
      'Approvers: anyone in the conversation or admins · 2 approvals needed · expires in 24h (',
    );
    await h.click(card, 'approve', 'U2');
    const progress = await h.slack.waitForCall('chat.update');
    expect(blocksText(progress)).toContain('1 of 2 approvals: <@U2>');
    expect(blocksText(progress)).toContain('approval:approve');
    await h.click(card, 'approve', 'U2');
    const again = await waitUntil(() => ephemerals(h)[0]);
    expect(again.text).toContain('You have already voted');
    expect(await query(h.database, 'SELECT status FROM approvals')).toEqual([{ status: 'pending' }]);
    expect(h.model.requests).toHaveLength(1);
    await h.click(card, 'approve', 'U3');
    await h.waitForText((t) => t === 'Finished.');
    const final = h.slack.callsTo('chat.update').at(-1);
    if (!final) throw new Error('no final update');
    expect(blocksText(final)).toContain('Approved by <@U2>, <@U3>');
    expect(blocksText(final)).not.toContain('approval:approve');
    const approved = await query(
      h.database,
      "SELECT payload FROM audit_events WHERE kind = 'approval.approved'",
    );
    expect(approved.map((e) => JSON.parse(String(e.payload)).rule)).toEqual([
      expect.objectContaining({ quorum: 2, expiresAfterMs: 86_400_000 }),
      expect.objectContaining({ quorum: 2, expiresAfterMs: 86_400_000 }),
    ]);
  });

  it('quorum under 30 racing signed clicks: exactly the quorum approves, the tool runs once', async () => {
    h = await startPolicyHarness({ tools: { create_note: { quorum: 3 } } });
    const card = await pauseOn(h, 'create_note', { text: 'race' });
    const harness = h;
    const users = Array.from({ length: 15 }, (_, i) => `U${100 + i}`);
    const responses = await Promise.all(
      [...users, ...users].map((user) => harness.click(card, 'approve', user)),
    );
    expect(responses.every((r) => r.status === 200)).toBe(true);
    await h.waitForText((t) => t === 'Finished.');
    await h.bot.conversations.idle();
    const [row] = await query(h.database, 'SELECT status, decided_by FROM approvals');
    expect(row?.status).toBe('executed');
    expect(String(row?.decided_by).split(',')).toHaveLength(3);
    expect(
      await query(h.database, "SELECT COUNT(*) AS n FROM approval_votes WHERE vote = 'approve'"),
    ).toEqual([{ n: 3 }]);
    expect(await query(h.database, 'SELECT COUNT(*) AS n FROM notes')).toEqual([{ n: 1 }]);
    expect(h.model.requests).toHaveLength(2);
    // The last picture of the card is the decision, whatever order the updates went out in.
    const last = await waitUntil(() => {
      const update = h.slack.callsTo('chat.update').at(-1);
      return update && !blocksText(update).includes('approval:approve') ? update : undefined;
    });
    expect(blocksText(last)).toMatch(/Approved by <@U\d+>, <@U\d+>, <@U\d+>/);
  });

  it('one rejection ends a quorum request', async () => {
    h = await startPolicyHarness({ tools: { create_note: { quorum: 2 } } });
    const card = await pauseOn(h, 'create_note', { text: 'vetoed' });
    await h.click(card, 'approve', 'U2');
    await h.slack.waitForCall('chat.update');
    await rejectWithModal(h, card, 'U3');
    await h.waitForText((t) => t === 'Finished.');
    const tool = h.model.requests[1]?.messages.find((m) => m.role === 'tool');
    expect(tool?.content).toBe('Tool execution was not approved.');
    expect(await query(h.database, 'SELECT status, decided_by FROM approvals')).toEqual([
      { status: 'rejected', decided_by: 'U3' },
    ]);
    expect(await query(h.database, 'SELECT COUNT(*) AS n FROM notes')).toEqual([{ n: 0 }]);
  });
});
