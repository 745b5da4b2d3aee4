import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { execute } from './db-rows.js';
import { rejectWithModal } from './decision-modals.js';
import { cardTs, type Harness, startHarness } from './harness.js';

describe('a decision taken in a modal on a card whose ts was never stored', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('updates the card that was clicked, found through the modal', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]),
      reply.text('Not noted.'),
    );
    await h.mention('note x');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.bot.conversations.idle();
    // As after a crash right after posting: the card is in Slack, its ts is not in the database.
    expect(await execute(h.database, 'UPDATE approvals SET message_ts = NULL')).toBe(1);
    const submitted = await rejectWithModal(h, card, 'U2');
    expect(submitted.status).toBe(200);
    await h.waitForText((text) => text === 'Not noted.');
    const update = await h.slack.waitForCall('chat.update', (call) => call.params.ts === cardTs(card));
    expect(JSON.stringify(update.params.blocks)).toContain('Rejected by <@U2>');
  });
});
