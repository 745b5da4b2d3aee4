import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { slackReply } from '../support/fake-slack.js';
import { waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { cardTs, type Harness, isApprovalCard, startHarness } from './harness.js';
import { startPolicyHarness } from './policy-support.js';

/**
 * A card post whose answer is lost (a server error, a timeout): Slack may have posted the card or not. The bot
 * looks in the thread before it posts again, so the card is there once either way, at once, with no notice.
 */
describe('a card post whose outcome is unknown', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  const start = async (slackPostedIt: boolean) => {
    const started = await startHarness({
      // The Web API client's own retry, as in production: it would post the card a second time.
      overrides: { retryConfig: { retries: 1, minTimeout: 10, maxTimeout: 10 }, deliveryRetryMs: 60_000 },
    });
    h = started;
    // The first card post: Slack keeps the card in its thread (or not), and either way answers a server error.
    const kept: { failed: boolean; ts?: string } = { failed: false };
    started.slack.setResponse('chat.postMessage', (params) => {
      const posted = () => started.slack.defaultReply('chat.postMessage', params);
      if (kept.failed || params.blocks === undefined) return posted();
      kept.failed = true;
      if (slackPostedIt) kept.ts = String((posted().body as { ts: unknown }).ts);
      return slackReply.http(500);
    });
    return { started, kept };
  };

  it.each([
    { slackPostedIt: true, posts: 1 },
    { slackPostedIt: false, posts: 2 },
  ])('is posted once in the thread (Slack posted it: $slackPostedIt)', async ({ slackPostedIt, posts }) => {
    const { started, kept } = await start(slackPostedIt);
    started.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'unknown' } }]),
      reply.text('Saved.'),
    );
    await started.mention('note unknown');
    const recorded = await waitUntil(
      async () => (await rows(started.database, 'select message_ts from approvals'))[0]?.message_ts,
      { message: 'the card recorded' },
    );
    const attempts = started.slack.callsTo('chat.postMessage').filter(isApprovalCard);
    expect(attempts).toHaveLength(posts);
    expect(started.slack.callsTo('conversations.replies')).toHaveLength(1);
    const card = attempts.at(-1);
    if (!card) throw new Error('no card');
    const ts = kept.ts ?? cardTs(card);
    expect(recorded).toBe(ts);
    expect((await started.click({ ...card, reply: { ts } }, 'approve', 'U2')).status).toBe(200);
    await started.waitForText((text) => text === 'Saved.');
    expect(started.texts().filter((text) => text.includes('could not post the approval card'))).toEqual([]);
  });

  it.each([
    { slackPostedIt: true, posts: 1 },
    { slackPostedIt: false, posts: 2 },
  ])(
    'its copy in the approval channel is posted once too (Slack posted it: $slackPostedIt)',
    async ({ slackPostedIt, posts }) => {
      const started = await startPolicyHarness(
        { tools: { create_note: { approvers: ['admins'], approvalChannel: 'C0APPROVE' } } },
        // The Web API client's own retry, as in production: it would post the copy a second time.
        { overrides: { retryConfig: { retries: 1, minTimeout: 10, maxTimeout: 10 } } },
      );
      h = started;
      const toCopy = (params: Record<string, unknown>) => params.channel === 'C0APPROVE';
      const kept: { failed: boolean; ts?: string } = { failed: false };
      started.slack.setResponse('chat.postMessage', (params) => {
        const posted = () => started.slack.defaultReply('chat.postMessage', params);
        if (kept.failed || !toCopy(params)) return posted();
        kept.failed = true;
        if (slackPostedIt) kept.ts = String((posted().body as { ts: unknown }).ts);
        return slackReply.http(500);
      });
      started.model.enqueue(
        reply.toolCalls([{ name: 'create_note', arguments: { text: 'copied' } }]),
        reply.text('Saved.'),
      );
      await started.mention('note copied');
      const recorded = await waitUntil(
        async () => (await rows(started.database, 'select message_ts from approval_cards'))[0]?.message_ts,
        { message: 'the copy recorded' },
      );
      const attempts = started.slack.callsTo('chat.postMessage').filter((c) => toCopy(c.params));
      expect(attempts).toHaveLength(posts);
      expect(started.slack.callsTo('conversations.history')).toHaveLength(1);
      const copy = attempts.at(-1);
      if (!copy) throw new Error('no copy');
      expect(recorded).toBe(kept.ts ?? cardTs(copy));
      // Decided: the copy that is there, the one recorded, loses its buttons.
      const [card] = started.slack.callsTo('chat.postMessage').filter(isApprovalCard);
      if (!card) throw new Error('no card');
      expect((await started.click(card, 'approve', 'UADMIN')).status).toBe(200);
      await started.waitForText((text) => text === 'Saved.');
      await waitUntil(() =>
        started.slack
          .callsTo('chat.update')
          .some((u) => u.params.channel === 'C0APPROVE' && u.params.ts === recorded),
      );
    },
  );
});
