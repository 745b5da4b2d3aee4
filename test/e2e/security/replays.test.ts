import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../../support/fake-openai.js';
import type { SlackCall } from '../../support/fake-slack.js';
import { FORM_CONTENT_TYPE, nextTs, signedPost, slashCommandBody } from '../../support/slack-requests.js';
import { DATABASE_KINDS } from '../../support/test-database.js';
import { waitUntil } from '../../support/wait.js';
import { rows } from '../db-rows.js';
import { cardClick, cardTs, type Harness, SECRET, startHarness } from '../harness.js';
import { blocksText, FakeClock, query, startPolicyHarness } from '../policy-support.js';

/**
 * A signed request captured and sent again within Slack's 5-minute window (the same body, timestamp and
 * signature; an event with the same id): answered 200 like any request, and changes nothing.
 */

/** A signed request, kept so that it can be sent again byte for byte. */
function captured(url: string, body: string) {
  const timestamp = Math.floor(Date.now() / 1000);
  return () => signedPost(url, SECRET, { body, contentType: FORM_CONTENT_TYPE, timestamp });
}

const replayLogged = (h: Harness, count = 1) =>
  waitUntil(
    () => h.logs.filter((line) => line.includes('replayed request ignored')).length >= count || undefined,
    { timeoutMs: 5_000, message: 'the replay was not refused' },
  );

describe.each(DATABASE_KINDS)('replayed signed requests on %s', (kind) => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a /approvals delegate replayed after undelegate is answered 200 and grants nothing', async () => {
    const clock = new FakeClock(); // 2026-01-05 09:00 UTC
    const harness = await startPolicyHarness(
      { tools: { create_note: { approvers: ['U0ALICE'] } } },
      { overrides: { clock }, kind },
    );
    h = harness;
    const id = randomUUID();
    const fields = slashCommandBody({
      command: '/approvals',
      text: 'delegate <@U0BOB> until:2026-01-06',
      userId: 'U0ALICE',
      channelId: 'C1',
      responseUrl: harness.slack.responseUrl(id),
    });
    const delegate = captured(harness.url, new URLSearchParams(fields).toString());
    expect((await delegate()).status).toBe(200);
    const granted = await harness.slack.waitForCall('response_url', (c) => c.params.responseUrlId === id);
    expect(String(granted.params.text)).toContain('Delegated: <@U0BOB>');
    expect(String((await harness.approvals('undelegate <@U0BOB>', 'U0ALICE')).params.text)).toBe(
      'Ended: <@U0BOB> no longer decides for you.',
    );

    expect((await delegate()).status).toBe(200);
    await replayLogged(harness);
    expect(String((await harness.approvals('delegations', 'U0BOB')).params.text)).not.toContain('U0ALICE');
    expect(harness.slack.callsTo('response_url').filter((c) => c.params.responseUrlId === id)).toHaveLength(
      1,
    );
    const grants = await query(
      harness.database,
      "SELECT seq FROM audit_events WHERE kind = 'delegation.granted'",
    );
    expect(grants).toHaveLength(1);
  });

  it('a replayed click counts once: no second vote, no second reply', async () => {
    const harness = await startPolicyHarness({ tools: { create_note: { quorum: 2 } } }, { kind });
    h = harness;
    harness.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'two keys' } }]),
      reply.text('Saved.'),
    );
    await harness.mention('note two keys');
    const [card] = await harness.waitForCards(1);
    if (!card) throw new Error('no card');
    const body = new URLSearchParams({
      payload: JSON.stringify(cardClick(card, 'approve', 'U2')),
    }).toString();
    const click = captured(harness.url, body);
    expect((await click()).status).toBe(200);
    await harness.slack.waitForCall('chat.update');
    expect((await click()).status).toBe(200);
    await replayLogged(harness);

    // A click that counted twice would settle the quorum of 2; a second delivery would be told "already voted".
    expect(await query(harness.database, 'SELECT user_id FROM approval_votes')).toEqual([{ user_id: 'U2' }]);
    expect(await query(harness.database, 'SELECT status FROM approvals')).toEqual([{ status: 'pending' }]);
    expect(harness.slack.callsTo('chat.postEphemeral')).toEqual([]);
    await harness.click(card, 'approve', 'U3');
    await harness.waitForText((t) => t === 'Saved.');
  });
});

describe('replayed events', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  /** Slack's `agent_session_stopped` for the thread `threadTs`. */
  const stopEvent = (threadTs: string) => ({
    type: 'agent_session_stopped',
    channel: 'C1',
    thread_ts: threadTs,
    user: 'U0STOPPER',
    streaming_message_ts: [],
    event_ts: nextTs(),
  });

  async function pausedOnCard(harness: Harness, n: number, threadTs?: string): Promise<SlackCall> {
    // The answer after the tool is enqueued only once the card is approved: a stopped run never asks for it.
    harness.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: `note ${n}` } }]));
    const ts = await harness.mention(`note ${n}`, threadTs ? { threadTs } : {});
    const cards = await harness.waitForCards(n);
    const card = cards[n - 1];
    if (!card) throw new Error(`no card for ${ts}`);
    return card;
  }

  it('an agent_session_stopped sent again with the same event_id does not cancel the next run', async () => {
    const harness = await startHarness();
    h = harness;
    const first = await pausedOnCard(harness, 1);
    const threadTs = String(first.params.thread_ts);
    const eventId = 'Ev0STOPREPLAY';
    await harness.sendEvent(stopEvent(threadTs), eventId);
    await waitUntil(
      async () =>
        (await rows(harness.database, "select id from runs where status = 'cancelled'")).length === 1 ||
        undefined,
      { timeoutMs: 5_000, message: 'the first run was not stopped' },
    );

    const second = await pausedOnCard(harness, 2, threadTs);
    await harness.sendEvent(stopEvent(threadTs), eventId);
    await replayLogged(harness);
    harness.model.enqueue(reply.text('Saved 2.'));
    await harness.click(second, 'approve', 'U1');
    await harness.waitForText((t) => t === 'Saved 2.');
    const runs = await rows(harness.database, 'select status from runs order by created_at');
    expect(runs.map((r) => r.status)).toEqual(['cancelled', 'completed']);
    expect(
      blocksText(await harness.slack.waitForCall('chat.update', (c) => c.params.ts === cardTs(second))),
    ).not.toContain('stopped');
  });
});
