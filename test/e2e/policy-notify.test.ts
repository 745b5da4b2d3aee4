import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { type SlackCall, slackReply } from '../support/fake-slack.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import { postInteraction } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { submitModal } from './decision-modals.js';
import { approvalIdOf, cardTs, type Harness, SECRET } from './harness.js';
import { blocksText, query, startPolicyHarness } from './policy-support.js';

/** Slack answers a post to a user ID with the ID of the direct-message channel it went to. */
function directMessagesAsSlackDoes(h: Harness): void {
  h.slack.setResponse('chat.postMessage', (params) => {
    const answer = h.slack.defaultReply('chat.postMessage', params);
    const channel = String(params.channel);
    if (!channel.startsWith('U') || typeof answer.body !== 'object' || answer.body === null) return answer;
    return { ...answer, body: { ...answer.body, channel: `D${channel.slice(1)}` } };
  });
}

describe('approval policy: notify by direct message', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  const dmCards = (harness: Harness) =>
    harness.slack
      .callsTo('chat.postMessage')
      .filter(
        (c) =>
          String(c.params.channel).startsWith('U') && JSON.stringify(c.params.blocks).includes('approval:'),
      );
  const updatesIn = (harness: Harness, channel: string) =>
    harness.slack.callsTo('chat.update').filter((u) => u.params.channel === channel);
  const clickInDm = (harness: Harness, copy: SlackCall, user: string) =>
    postInteraction(
      harness.url,
      SECRET,
      blockActionsPayload({
        userId: user,
        channelId: `D${user.slice(1)}`,
        messageTs: cardTs(copy),
        actionId: 'approval:approve',
        value: approvalIdOf(copy),
      }),
    );

  it('each person who may decide gets a copy; a decision in a DM updates the thread card and every copy', async () => {
    h = await startPolicyHarness({
      tools: {
        create_note: {
          approvers: ['admins', 'U0BOSS', 'S0REVIEW', 'conversation'],
          notify: ['thread', 'dm'],
        },
      },
    });
    directMessagesAsSlackDoes(h);
    h.slack.setResponse('usergroups.users.list', () => slackReply.ok({ users: ['U7', 'U1', 'U0BOSS'] }));
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'dm me' } }]),
      reply.text('Noted.'),
    );
    await h.mention('write a note', { user: 'U1' });
    await waitUntil(() => (dmCards(h).length === 3 ? true : undefined));
    const [thread] = h.cards().filter((c) => c.params.channel === 'C1');
    if (!thread) throw new Error('no thread card');
    // Admins, listed users and group members, each once; not the requester, not "the conversation".
    expect(dmCards(h).map((c) => c.params.channel)).toEqual(['UADMIN', 'U0BOSS', 'U7']);
    for (const copy of dmCards(h)) {
      expect(approvalIdOf(copy)).toBe(approvalIdOf(thread));
      expect(copy.params.thread_ts).toBeUndefined();
      expect(blocksText(copy)).toContain('Requested in a thread in <#C1>');
    }
    // Each copy is audited once Slack has answered its post: wait for the last of them.
    const postedTo = async () =>
      (await query(h.database, "SELECT payload FROM audit_events WHERE kind = 'approval.card_posted'")).map(
        (r) => String(JSON.parse(String(r.payload)).channelId),
      );
    await waitUntil(async () => ((await postedTo()).includes('D7') ? true : undefined), {
      message: 'the copy sent to U7 was never audited',
    });
    expect((await postedTo()).sort()).toEqual(expect.arrayContaining(['D0BOSS', 'DADMIN', 'D7']));

    const [, , seven] = dmCards(h);
    if (!seven) throw new Error('no copy for U7');
    await clickInDm(h, seven, 'U7');
    await h.waitForText((t) => t === 'Noted.');
    await waitUntil(() =>
      ['C1', 'DADMIN', 'D0BOSS', 'D7'].every((channel) => updatesIn(h, channel).length >= 1)
        ? true
        : undefined,
    );
    for (const channel of ['C1', 'DADMIN', 'D0BOSS', 'D7']) {
      const last = updatesIn(h, channel).at(-1);
      expect(blocksText(last as SlackCall)).toContain('Approved by <@U7>');
      expect(blocksText(last as SlackCall)).not.toContain('approval:approve');
    }
  });

  it('Reject from a DM copy: the form carries the DM, the decision updates the thread card and every copy', async () => {
    h = await startPolicyHarness({
      tools: { create_note: { approvers: ['U0BOSS', 'U0LEAD'], notify: ['thread', 'dm'] } },
    });
    directMessagesAsSlackDoes(h);
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'no' } }]),
      reply.text('Not added.'),
    );
    await h.mention('write a note', { user: 'U1' });
    await waitUntil(() => (dmCards(h).length === 2 ? true : undefined));
    const [boss] = dmCards(h);
    if (!boss) throw new Error('no copy');
    const before = h.slack.callsTo('views.open').length;
    await postInteraction(
      h.url,
      SECRET,
      blockActionsPayload({
        userId: 'U0BOSS',
        channelId: 'D0BOSS',
        messageTs: cardTs(boss),
        actionId: 'approval:reject',
        value: approvalIdOf(boss),
      }),
    );
    const opened = await h.slack.waitForCall(
      'views.open',
      () => h.slack.callsTo('views.open').length > before,
    );
    const view = opened.params.view as { private_metadata: string; callback_id: string };
    expect(JSON.parse(view.private_metadata)).toMatchObject({ c: 'D0BOSS', m: cardTs(boss) });
    const submitted = await submitModal(
      h,
      { privateMetadata: view.private_metadata, callbackId: view.callback_id },
      'U0BOSS',
      { reason: { reason_input: { type: 'plain_text_input', value: 'not now' } } },
    );
    expect(submitted.status).toBe(200);
    await h.waitForText((t) => t === 'Not added.');
    await waitUntil(() =>
      ['C1', 'D0BOSS', 'D0LEAD'].every((channel) => updatesIn(h, channel).length >= 1) ? true : undefined,
    );
    for (const channel of ['C1', 'D0BOSS', 'D0LEAD']) {
      const last = updatesIn(h, channel).at(-1);
      expect(blocksText(last as SlackCall)).toContain('Rejected by <@U0BOSS>');
      expect(blocksText(last as SlackCall)).not.toContain('approval:reject');
    }
  });

  it('dm only: the thread card has no buttons; at most 25 copies, the others are named in the thread', async () => {
    const members = Array.from({ length: 30 }, (_, i) => `U0M${String(i).padStart(2, '0')}`);
    h = await startPolicyHarness({
      tools: { create_note: { approvers: ['S0MANY'], notify: ['dm'] } },
    });
    h.slack.setResponse('usergroups.users.list', () => slackReply.ok({ users: members }));
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'crowd' } }]),
      reply.text('Noted.'),
    );
    await h.mention('write a note', { user: 'U1' });
    const told = await h.waitForText((t) => t.includes('was sent by direct message to 25 people'));
    expect(told).toContain('5 more may decide it too: <@U0M25>, <@U0M26>, <@U0M27>, <@U0M28>, <@U0M29>.');
    expect(dmCards(h).map((c) => c.params.channel)).toEqual(members.slice(0, 25));
    const thread = h.slack
      .callsTo('chat.postMessage')
      .find((c) => c.params.channel === 'C1' && blocksText(c).includes('Approval needed'));
    if (!thread) throw new Error('no thread card');
    expect(blocksText(thread)).toContain('Sent by direct message to the people who may decide.');
    expect(blocksText(thread)).not.toContain('approval:approve');
    const last = dmCards(h).at(-1);
    if (!last) throw new Error('no copy');
    await clickInDm(h, last, 'U0M24');
    await h.waitForText((t) => t === 'Noted.');
  });
});
