import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { DATABASE_KINDS } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { approvalIdOf, type Harness, startHarness } from './harness.js';

describe.each(DATABASE_KINDS)('conversations: turns, threads and DMs, on %s', (kind) => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ kind });
  });
  afterEach(async () => {
    await h.close();
  });

  it('two gated calls and one free call in one turn: the free one runs at once, the model waits for both decisions', async () => {
    h.model.enqueue(
      reply.toolCalls([
        { name: 'create_note', arguments: { text: 'first' }, id: 'call_a' },
        { name: 'get_current_time', arguments: { timeZone: 'UTC' }, id: 'call_b' },
        { name: 'create_note', arguments: { text: 'second' }, id: 'call_c' },
      ]),
      reply.text('Both notes are in.'),
    );
    await h.mention('add two notes and tell me the time');
    const cards = await h.waitForCards(2);
    expect(cards.map((card) => JSON.stringify(card.params.blocks).includes('first'))).toEqual([true, false]);
    const [first, second] = cards;
    if (!first || !second) throw new Error('cards missing');

    await h.click(first, 'approve', 'U2');
    await h.slack.waitForCall('chat.update');
    // Partial resolution: one decision leaves the run paused and the model is not asked again.
    expect(h.model.requests).toHaveLength(1);

    await h.click(second, 'approve', 'U3');
    await h.waitForText((text) => text === 'Both notes are in.');
    const tools = h.model.requests[1]?.messages.filter((m) => m.role === 'tool') ?? [];
    expect(tools.map((m) => [m.tool_call_id, m.content])).toEqual([
      ['call_a', 'Created note #1.'],
      ['call_b', expect.stringContaining('(UTC)')],
      ['call_c', 'Created note #2.'],
    ]);
    expect(h.model.requests).toHaveLength(2);
  });

  it('a follow-up in the thread continues the conversation without a mention and keeps the history once', async () => {
    h.model.enqueue(reply.text('Hello!'), reply.text('You said hi before.'));
    const ts = await h.mention('hi');
    await h.waitForText((text) => text === 'Hello!');
    await h.message('what did I say?', { threadTs: ts });
    await h.waitForText((text) => text === 'You said hi before.');
    const messages = h.model.requests[1]?.messages.filter((m) => m.role !== 'system') ?? [];
    expect(messages.map((m) => [m.role, m.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'Hello!'],
      ['user', 'what did I say?'],
    ]);
    const posts = h.slack.callsTo('chat.postMessage');
    expect(posts.every((post) => post.params.thread_ts === ts)).toBe(true);
  });

  it('ignores channel messages outside a known thread, bot messages and messages with a subtype', async () => {
    h.model.enqueue(reply.text('Hi there'));
    await h.message('top-level chatter', {});
    await h.message('a reply in a thread the bot is not in', { threadTs: '1700000000.000001' });
    const ts = await h.mention('hello');
    await h.waitForText((text) => text === 'Hi there');
    await h.sendEvent({
      type: 'message',
      subtype: 'message_changed',
      channel: 'C1',
      ts: '1.2',
      hidden: true,
    });
    await h.sendEvent({
      type: 'message',
      bot_id: 'B2',
      user: 'U9',
      text: 'beep',
      channel: 'C1',
      ts: '1.3',
      thread_ts: ts,
      channel_type: 'channel',
    });
    await h.bot.conversations.idle();
    expect(h.model.requests).toHaveLength(1);
  });

  it('only the mention of the bot is removed from what the model reads; other people stay mentioned', async () => {
    h.model.enqueue(reply.text('Sure.'));
    await h.mention('tell <@U042ABC> that <@UBOT> says hi');
    await h.waitForText((text) => text === 'Sure.');
    const user = h.model.requests[0]?.messages.find((m) => m.role === 'user');
    expect(user?.content).toBe('tell <@U042ABC> that  says hi');
  });

  it('DMs work the same way, each top-level DM in its own thread', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'from a DM' } }]),
      reply.text('Noted.'),
    );
    const ts = await h.message('note this: from a DM', { channel: 'D1', channelType: 'im' });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(card.params).toMatchObject({ channel: 'D1', thread_ts: ts });
    await h.click(card, 'approve', 'U1');
    await h.waitForText((text) => text === 'Noted.');
  });

  it('a message sent while a card waits is queued, announced, and answered after the run ends', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]),
      reply.text('First done.'),
      reply.text('Second answer.'),
    );
    const ts = await h.mention('add a note x');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.message('and another thing', { threadTs: ts });
    await h.waitForText((text) => text.includes('once the pending approval'));
    expect(h.model.requests).toHaveLength(1);
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Second answer.');
    const last = h.model.requests[2]?.messages.filter((m) => m.role === 'user').map((m) => m.content);
    expect(last).toEqual(['add a note x', 'and another thing']);
    expect(approvalIdOf(card)).toMatch(/^apr_/);
  });

  it('waits politely for approvals: the card says who asked and who may decide', async () => {
    h.model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 3 } }]));
    await h.mention('delete note 3');
    const [card] = await h.waitForCards(1);
    const blocks = JSON.stringify(card?.params.blocks);
    expect(blocks).toContain('Requested by <@U1>');
    expect(blocks).toContain('Approvers: admins');
    await waitUntil(() => h.model.requests.length === 1);
  });
});
