import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { rejectWithModal } from './decision-modals.js';
import { type Harness, startHarness } from './harness.js';

describe('approval card: approve and reject through Slack', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('approve: the card is updated, the tool runs once, the answer is posted in the thread', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'hello' } }]),
      reply.text('I added the note.'),
    );
    const ts = await h.mention('please add a note saying hello');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(card.params.thread_ts).toBe(ts);
    expect(JSON.stringify(card.params.blocks)).toContain('create_note');
    expect(JSON.stringify(card.params.blocks)).toContain('hello');
    expect(h.model.requests).toHaveLength(1);

    const response = await h.click(card, 'approve', 'U2');
    expect(response.status).toBe(200);
    const answer = await h.waitForText((text) => text === 'I added the note.');
    expect(answer).toBe('I added the note.');

    const update = await h.slack.waitForCall('chat.update');
    expect(update.params.ts).toBe((card.reply as { ts: string }).ts);
    const updated = JSON.stringify(update.params.blocks);
    expect(updated).toContain('Approved by <@U2>');
    expect(updated).not.toContain('approval:approve');

    const second = h.model.requests[1];
    const toolMessage = second?.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toBe('Created note #1.');

    h.model.enqueue(
      reply.toolCalls([{ name: 'list_notes', arguments: {} }]),
      reply.text('You have one note.'),
    );
    await h.message('what notes do we have?', { threadTs: ts });
    await h.waitForText((text) => text === 'You have one note.');
    const listed = h.model.requests[3]?.messages.filter((m) => m.role === 'tool').at(-1);
    expect(listed?.content).toBe('#1 hello');
  });

  it('reject: the tool does not run and the model reads the exact rejection text', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'nope' } }]),
      reply.text('Understood, no note.'),
    );
    await h.mention('add a note nope');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const submitted = await rejectWithModal(h, card, 'U2');
    expect(submitted).toEqual({ status: 200, body: undefined });
    await h.waitForText((text) => text === 'Understood, no note.');
    const toolMessage = h.model.requests[1]?.messages.find((m) => m.role === 'tool');
    expect(toolMessage?.content).toBe('Tool execution was not approved.');
    const update = await h.slack.waitForCall('chat.update');
    expect(JSON.stringify(update.params.blocks)).toContain('Rejected by <@U2>');

    h.model.enqueue(reply.toolCalls([{ name: 'list_notes', arguments: {} }]), reply.text('none'));
    await h.message('list notes', { threadTs: String(card.params.thread_ts) });
    await h.waitForText((text) => text === 'none');
    expect(h.model.requests[3]?.messages.filter((m) => m.role === 'tool').at(-1)?.content).toBe(
      'There are no notes.',
    );
  });
});
