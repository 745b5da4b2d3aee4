import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import {
  appMentionEvent,
  eventEnvelope,
  messageEvent,
  nextTs,
  postEvent,
  signedPost,
} from '../support/slack-requests.js';
import { DATABASE_KINDS } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { type DatabaseTarget, rows } from './db-rows.js';
import { openModal, submitModal } from './decision-modals.js';
import { type Harness, SECRET, startHarness } from './harness.js';

/** The `n` of a `SELECT COUNT(*) AS n` on the bot's database. */
async function count(target: DatabaseTarget, sql: string): Promise<number> {
  const [row] = await rows(target, sql);
  return row && 'n' in row ? Number(row.n) : Number.NaN;
}

describe.each(DATABASE_KINDS)('exactly once under duplicates and races, on %s', (kind) => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ kind });
  });
  afterEach(async () => {
    await h.close();
  });

  it('a double click executes the tool once and tells the second clicker who decided', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'once' } }]),
      reply.text('Done once.'),
    );
    await h.mention('add a note once');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const responses = await Promise.all([
      h.click(card, 'approve', 'U2'),
      h.click(card, 'approve', 'U2'),
      h.click(card, 'approve', 'U3'),
    ]);
    expect(responses.map((r) => r.status)).toEqual([200, 200, 200]);
    await h.waitForText((text) => text === 'Done once.');
    await h.bot.conversations.idle();
    expect(await count(h.database, 'SELECT COUNT(*) AS n FROM notes')).toBe(1);
    expect(h.model.requests).toHaveLength(2);
    const notices = await waitUntil(() => {
      const found = h.slack.callsTo('chat.postEphemeral');
      return found.length === 2 ? found : undefined;
    });
    expect(
      notices.every((n) => String(n.params.text).startsWith('This request was already approved by <@')),
    ).toBe(true);
  });

  it('Approve and Reject clicked at once by two people: exactly one decision wins', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'race' } }]),
      reply.text('Settled.'),
    );
    await h.mention('add a note race');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    // Reject asks for an optional reason in a modal; its submission races the Approve click.
    const modal = await openModal(h, card, 'reject', 'U3');
    const rejection = { reason: { reason_input: { type: 'plain_text_input', value: null } } };
    await Promise.all([h.click(card, 'approve', 'U2'), submitModal(h, modal, 'U3', rejection)]);
    await h.waitForText((text) => text === 'Settled.');
    await h.bot.conversations.idle();
    const status = await count(
      h.database,
      "SELECT COUNT(*) AS n FROM approvals WHERE status IN ('executed','rejected')",
    );
    expect(status).toBe(1);
    const notes = await count(h.database, 'SELECT COUNT(*) AS n FROM notes');
    const executed = await count(h.database, "SELECT COUNT(*) AS n FROM approvals WHERE status = 'executed'");
    expect(notes).toBe(executed);
    expect(h.slack.callsTo('chat.update').length).toBeGreaterThanOrEqual(1);
    const last = h.slack.callsTo('chat.update').at(-1);
    expect(JSON.stringify(last?.params.blocks)).not.toContain('approval:approve');
    expect(h.model.requests).toHaveLength(2);
  });

  it('a retried event and a mention delivered as both app_mention and message get one reply', async () => {
    h.model.enqueue(reply.text('Only once.'));
    const ts = nextTs();
    const mention = eventEnvelope(
      appMentionEvent({ user: 'U1', channel: 'C1', text: '<@UBOT> hi', ts, threadTs: '1700000000.000100' }),
      { eventId: 'EvSAME' },
    );
    const first = await postEvent(h.url, SECRET, mention);
    const retry = await postEvent(h.url, SECRET, mention, {
      'x-slack-retry-num': '1',
      'x-slack-retry-reason': 'http_timeout',
    });
    const asMessage = eventEnvelope(
      messageEvent({ user: 'U1', channel: 'C1', text: '<@UBOT> hi', ts, threadTs: '1700000000.000100' }),
      { eventId: 'EvOTHER' },
    );
    const second = await postEvent(h.url, SECRET, asMessage);
    expect([first.status, retry.status, second.status]).toEqual([200, 200, 200]);
    await h.waitForText((text) => text === 'Only once.');
    await h.bot.conversations.idle();
    expect(h.model.requests).toHaveLength(1);
    expect(h.texts()).toEqual(['Only once.']);
  });

  it('forged or stale signatures get 401 and change nothing', async () => {
    const body = JSON.stringify(
      eventEnvelope(appMentionEvent({ user: 'U1', channel: 'C1', text: '<@UBOT> hi' })),
    );
    const forged = await signedPost(h.url, 'not-the-secret', { body, contentType: 'application/json' });
    const stale = await signedPost(h.url, SECRET, {
      body,
      contentType: 'application/json',
      timestamp: Math.floor(Date.now() / 1000) - 6 * 60,
    });
    const unsigned = await fetch(h.url, {
      method: 'POST',
      body,
      headers: { 'content-type': 'application/json' },
    });
    expect([forged.status, stale.status, unsigned.status]).toEqual([401, 401, 401]);
    await h.bot.conversations.idle();
    expect(h.model.requests).toHaveLength(0);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    expect(await count(h.database, 'SELECT COUNT(*) AS n FROM conversations')).toBe(0);
  });

  it('an unknown or forged button value gets a polite ephemeral message and changes nothing', async () => {
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'keep' } }]));
    await h.mention('add a note keep');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const forgedCard = {
      ...card,
      params: {
        ...card.params,
        blocks: [{ type: 'actions', elements: [{ value: 'apr_000000000000000000000000' }] }],
      },
    };
    const garbage = {
      ...card,
      params: { ...card.params, blocks: [{ type: 'actions', elements: [{ value: '{"approvalId":"x"}' }] }] },
    };
    await h.click(forgedCard, 'approve', 'U2');
    await h.click(garbage, 'approve', 'U2');
    const notices = await waitUntil(() => {
      const found = h.slack.callsTo('chat.postEphemeral');
      return found.length === 2 ? found : undefined;
    });
    expect(notices.every((n) => String(n.params.text).includes('nothing happened'))).toBe(true);
    expect(await count(h.database, "SELECT COUNT(*) AS n FROM approvals WHERE status = 'pending'")).toBe(1);
  });
});
