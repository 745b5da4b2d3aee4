import { webApi } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { cardMetadata, findCardInThread, findCopyInChannel } from '../../src/slack/card-in-thread.js';
import { type FakeSlack, slackReply, startFakeSlack } from '../support/fake-slack.js';

describe('finding a card already in its thread', () => {
  let slack: FakeSlack;
  let client: webApi.WebClient;
  beforeEach(async () => {
    slack = await startFakeSlack();
    client = new webApi.WebClient('xoxb-test', { slackApiUrl: slack.url, retryConfig: { retries: 0 } });
  });
  afterEach(async () => {
    await slack.close();
  });

  const post = (thread: string, text: string, approvalId?: string) =>
    client.chat.postMessage({
      channel: 'C1',
      thread_ts: thread,
      text,
      ...(approvalId ? { metadata: cardMetadata(approvalId) } : {}),
    });

  it("reads the thread page by page and knows a card by its request's id, not by its text", async () => {
    const requested = Date.now();
    await Promise.all(Array.from({ length: 200 }, (_, i) => post('1.1', `message ${i}`)));
    // The other request's card, and a message that only names the request.
    await post('1.1', 'card', 'apr_other');
    await post('1.1', 'about apr_wanted');
    const card = await post('1.1', 'card', 'apr_wanted');
    await post('2.2', 'card in another thread', 'apr_elsewhere');

    const wanted = { id: 'apr_wanted', channelId: 'C1', threadTs: '1.1', createdAt: requested };
    expect(await findCardInThread(client, wanted)).toEqual({ channelId: 'C1', messageTs: card.ts });
    const reads = slack.callsTo('conversations.replies');
    expect(reads.map((call) => call.params.cursor ?? 'first')).toEqual(['first', '200']);
    expect(reads[0]?.params).toMatchObject({
      channel: 'C1',
      ts: '1.1',
      include_all_metadata: 'true',
      oldest: String(Math.floor((requested - 5 * 60_000) / 1000)),
    });

    expect(await findCardInThread(client, { ...wanted, id: 'apr_elsewhere' })).toBeUndefined();
    expect(await findCardInThread(client, { ...wanted, threadTs: '3.3' })).toBeUndefined();
  });

  it('reads only from shortly before the request: a card older than that is not its card', async () => {
    await post('1.1', 'card', 'apr_1');
    const later = Date.now() + 10 * 60_000;
    expect(
      await findCardInThread(client, { id: 'apr_1', channelId: 'C1', threadTs: '1.1', createdAt: later }),
    ).toBeUndefined();
    expect(
      await findCardInThread(client, {
        id: 'apr_1',
        channelId: 'C1',
        threadTs: '1.1',
        createdAt: Date.now(),
      }),
    ).toBeDefined();
  });

  it('says what Slack refused, for the caller to post anyway', async () => {
    slack.setResponse('conversations.replies', () => slackReply.error('missing_scope'));
    await expect(
      findCardInThread(client, { id: 'apr_1', channelId: 'C1', threadTs: '1.1', createdAt: Date.now() }),
    ).rejects.toThrow(/missing_scope/);
  });

  it("finds a copy among its channel's own messages, newest first, by the request's id only", async () => {
    const requested = Date.now();
    const copy = await client.chat.postMessage({
      channel: 'C0APPROVE',
      text: 'copy',
      metadata: cardMetadata('apr_1'),
    });
    await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        client.chat.postMessage({ channel: 'C0APPROVE', text: `later ${i}` }),
      ),
    );
    // The same request's card in a thread of that channel is not a message of the channel itself.
    await post('1.1', 'card', 'apr_2');
    await client.chat.postMessage({
      channel: 'C0OTHER',
      text: 'copy elsewhere',
      metadata: cardMetadata('apr_2'),
    });

    const found = await findCopyInChannel(client, 'C0APPROVE', { id: 'apr_1', createdAt: requested });
    expect(found).toEqual({ channelId: 'C0APPROVE', messageTs: copy.ts });
    const reads = slack.callsTo('conversations.history');
    expect(reads.map((call) => call.params.cursor ?? 'first')).toEqual(['first']);
    expect(reads[0]?.params).toMatchObject({
      channel: 'C0APPROVE',
      include_all_metadata: 'true',
      oldest: String(Math.floor((requested - 5 * 60_000) / 1000)),
    });
    expect(await findCopyInChannel(client, 'C1', { id: 'apr_2', createdAt: requested })).toBeUndefined();
    expect(
      await findCopyInChannel(client, 'C0APPROVE', { id: 'apr_2', createdAt: requested }),
    ).toBeUndefined();
  });
});
