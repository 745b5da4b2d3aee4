import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { reply } from '../support/fake-openai.js';
import { type FakeReply, slackReply } from '../support/fake-slack.js';
import { isRecord } from '../support/json-value.js';
import { postSlashCommand, slashCommandBody } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { type Harness, SECRET, startHarness } from './harness.js';

/** Web API faults: nothing is lost, what Slack did not accept is posted again, and clicks never wait. */
describe('Slack API faults', () => {
  let h: Harness;
  beforeEach(async () => {
    // Answers posted, not streamed: a refused post is what gets retried.
    h = await startHarness({
      env: { OPENAI_STREAM: 'false', ADMIN_USER_IDS: 'UADMIN' },
      overrides: { deliveryRetryMs: 100 },
    });
  });
  afterEach(async () => {
    await h.close();
  });

  const approvals = async () =>
    z
      .array(z.object({ status: z.string(), messageTs: z.string().nullable() }))
      .parse(await rows(h.database, 'select status, message_ts as "messageTs" from approvals'));
  /** Cards the database says are still owed to threads (Slack has not accepted them yet). */
  const owedCards = async () =>
    (await rows(h.database, "select id from deliveries where kind = 'card'")).map((row) => row.id);

  const pendingForAdmin = async (): Promise<string> => {
    const id = randomUUID();
    const fields = slashCommandBody({
      command: '/approvals',
      text: '',
      userId: 'UADMIN',
      channelId: 'C1',
      responseUrl: h.slack.responseUrl(id),
    });
    await postSlashCommand(h.url, SECRET, fields);
    const answer = await h.slack.waitForCall('response_url', (c) => c.params.responseUrlId === id);
    return JSON.stringify(answer.params.blocks ?? answer.params.text);
  };

  it.each([
    { name: '500', failure: slackReply.http(500) },
    { name: 'ratelimited', failure: slackReply.rateLimited(0) },
  ])(
    'a card that cannot be posted ($name) stays pending, is visible, and is posted once Slack recovers',
    async ({ failure }) => {
      let slackDown = true;
      h.slack.setResponse('chat.postMessage', (params) =>
        slackDown && params.blocks !== undefined ? failure : h.slack.defaultReply('chat.postMessage', params),
      );
      h.model.enqueue(
        reply.toolCalls([{ name: 'create_note', arguments: { text: 'later' } }]),
        reply.text('Saved it.'),
      );
      await h.mention('note later');
      await h.waitForText((text) => text.includes('could not post the approval card'));
      // Several attempts fail; the request stays pending (listed for admins) and the thread was told once.
      await waitUntil(() => h.slack.callsTo('chat.postMessage').filter((c) => c.params.blocks).length >= 3);
      expect(await approvals()).toEqual([{ status: 'pending', messageTs: null }]);
      const [requested] = await rows(h.database, 'select id from approvals');
      expect(await owedCards()).toEqual([`card:${requested?.id}`]);
      expect(h.logs.some((line) => line.includes('approval card could not be posted'))).toBe(true);
      expect(h.texts().filter((text) => text.includes('could not post the approval card'))).toHaveLength(1);
      // Admins see it among the pending requests.
      const listed = await pendingForAdmin();
      expect(listed).toContain('create_note');

      slackDown = false;
      const posted = () => h.cards().filter((c) => isRecord(c.reply) && c.reply.ok === true);
      const card = await waitUntil(() => posted()[0]);
      await waitUntil(async () => (await approvals())[0]?.messageTs !== null);
      expect(await owedCards()).toEqual([]);
      await h.click(card, 'approve', 'U2');
      await h.waitForText((text) => text === 'Saved it.');
      expect(posted()).toHaveLength(1);
    },
  );

  it('a failed chat.update never loses the decision: the run goes on and later clicks see it', async () => {
    h.slack.setResponse('chat.update', () => slackReply.http(500));
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]),
      reply.text('Done it.'),
    );
    await h.mention('note x');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Done it.');
    expect(await approvals()).toEqual([{ status: 'executed', messageTs: expect.any(String) }]);
    await h.click(card, 'approve', 'U3');
    const told = await h.slack.waitForCall('chat.postEphemeral');
    expect(told.params.text).toMatch(/already approved by <@U2>/);
  });

  it('a rate-limited chat.update neither delays the ack nor holds the decision back', async () => {
    // Retry-After of 20 s: a client that waits it out would hold the run back far past the test's patience.
    h.slack.setResponse('chat.update', (): FakeReply => slackReply.rateLimited(20));
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'y' } }]),
      reply.text('Went on.'),
    );
    await h.mention('note y');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const response = await h.click(card, 'approve', 'U2');
    // Bolt answers 404 when a listener has not acked within 3 s.
    expect(response.status).toBe(200);
    await h.waitForText((text) => text === 'Went on.');
  });

  it('a final answer Slack refused is posted again', async () => {
    let refusals = 2;
    h.slack.setResponse('chat.postMessage', (params) => {
      if (params.text === 'Here you go.' && refusals > 0) {
        refusals -= 1;
        return slackReply.error('internal_error');
      }
      return h.slack.defaultReply('chat.postMessage', params);
    });
    h.model.enqueue(reply.text('Here you go.'));
    await h.mention('hi');
    await waitUntil(
      () => h.slack.callsTo('chat.postMessage').filter((c) => c.params.text === 'Here you go.').length === 3,
    );
    expect(h.model.requests).toHaveLength(1);
  });

  it('post_message to a channel the bot is not in: the thread and the model are told to invite the bot', async () => {
    h.slack.setResponse('chat.postMessage', (params) =>
      params.channel === 'C0OUTSIDE'
        ? slackReply.error('not_in_channel')
        : h.slack.defaultReply('chat.postMessage', params),
    );
    h.model.enqueue(
      reply.toolCalls([{ name: 'post_message', arguments: { channel: 'C0OUTSIDE', text: 'hello' } }]),
      reply.text('I cannot post there yet.'),
    );
    await h.mention('post hello in C0OUTSIDE');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.click(card, 'approve', 'UADMIN');
    const notice = await h.waitForText((text) => text.startsWith('I could not post to'));
    expect(notice).toContain('the bot is not a member of that channel. Invite the bot to <#C0OUTSIDE>');
    await h.waitForText((text) => text === 'I cannot post there yet.');
    const output = h.model.requests[1]?.messages.find((m) => m.role === 'tool')?.content;
    expect(output).toMatch(
      /^Nothing was posted: the bot is not a member of <#C0OUTSIDE>\. The thread was asked/,
    );
    // Not a tool failure: nothing for an operator to chase in the log.
    expect(h.logs.join('\n')).not.toContain('tool failed');
  });
});
