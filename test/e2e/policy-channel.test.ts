import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { type SlackCall, slackReply } from '../support/fake-slack.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import { postInteraction } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { approvalIdOf, cardTs, type Harness, SECRET } from './harness.js';
import { blocksText, startPolicyHarness } from './policy-support.js';

const PERMALINK = 'https://test.slack.com/archives/C1/p1700000000000100';

describe('approval policy: approval channel', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  /** A click on the copy in the approval channel (not in a thread). */
  const clickCopy = (harness: Harness, copy: SlackCall, user: string) =>
    postInteraction(
      harness.url,
      SECRET,
      blockActionsPayload({
        userId: user,
        channelId: 'C0APPROVE',
        messageTs: cardTs(copy),
        actionId: 'approval:approve',
        value: approvalIdOf(copy),
      }),
    );

  const nth = (calls: SlackCall[], i: number): SlackCall => {
    const call = calls[i];
    if (!call) throw new Error(`no update #${i}`);
    return call;
  };
  const updatesOf = (harness: Harness, card: SlackCall) =>
    harness.slack
      .callsTo('chat.update')
      .filter((u) => u.params.channel === card.params.channel && u.params.ts === cardTs(card));

  it('the card is also posted in the approval channel, linking back; a decision in either place updates both', async () => {
    h = await startPolicyHarness(
      { tools: { delete_note: { approvers: ['admins'], quorum: 2, approvalChannel: 'C0APPROVE' } } },
      { env: { ADMIN_USER_IDS: 'UADMIN,UADMIN2' } },
    );
    h.slack.setResponse('chat.getPermalink', () => slackReply.ok({ channel: 'C1', permalink: PERMALINK }));
    h.model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 9 } }]), reply.text('Gone.'));
    const ts = await h.mention('delete note 9');
    const [card, copy] = await h.waitForCards(2);
    if (!card || !copy) throw new Error('expected two cards');
    expect(card.params).toMatchObject({ channel: 'C1', thread_ts: ts });
    expect(copy.params.channel).toBe('C0APPROVE');
    expect(copy.params.thread_ts).toBeUndefined();
    expect(approvalIdOf(copy)).toBe(approvalIdOf(card));
    expect(blocksText(copy)).toContain(`Requested in <#C1> · <${PERMALINK}|Open the conversation>`);
    const permalinkCall = await h.slack.waitForCall('chat.getPermalink');
    expect(permalinkCall.params).toMatchObject({ channel: 'C1', message_ts: ts });

    // Someone in the approval channel who may not decide: nothing changes, they are told who may.
    await clickCopy(h, copy, 'U2');
    const refused = await h.slack.waitForCall('chat.postEphemeral');
    expect(refused.params).toMatchObject({ channel: 'C0APPROVE', user: 'U2' });
    expect(String(refused.params.text)).toContain('It can be decided by admins.');

    // A vote in the thread shows on both cards.
    await h.click(card, 'approve', 'UADMIN');
    await waitUntil(() => updatesOf(h, copy).length === 1);
    expect(blocksText(nth(updatesOf(h, card), 0))).toContain('1 of 2 approvals: <@UADMIN>');
    const copyProgress = blocksText(nth(updatesOf(h, copy), 0));
    expect(copyProgress).toContain('1 of 2 approvals: <@UADMIN>');
    expect(copyProgress).toContain('Open the conversation');

    // The deciding vote in the approval channel settles both cards and resumes the thread's run.
    await clickCopy(h, copy, 'UADMIN2');
    await h.waitForText((t) => t === 'Gone.');
    await waitUntil(() => updatesOf(h, copy).length === 2 && updatesOf(h, card).length === 2);
    for (const update of [nth(updatesOf(h, card), 1), nth(updatesOf(h, copy), 1)]) {
      expect(blocksText(update)).toContain('Approved by <@UADMIN>, <@UADMIN2>');
      expect(blocksText(update)).not.toContain('approval:approve');
    }
  });

  it('without a permalink the copy still names the conversation channel', async () => {
    h = await startPolicyHarness({ tools: { create_note: { approvalChannel: 'C0APPROVE' } } });
    h.slack.setResponse('chat.getPermalink', () => slackReply.error('message_not_found'));
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]));
    await h.mention('add a note x');
    const [, copy] = await h.waitForCards(2);
    if (!copy) throw new Error('no copy');
    expect(copy.params.channel).toBe('C0APPROVE');
    expect(blocksText(copy)).toContain('Requested in a thread in <#C1>');
  });
});
