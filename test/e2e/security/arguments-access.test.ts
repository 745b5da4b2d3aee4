import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UNKNOWN_BUTTON } from '../../../src/slack/clicks/refusals.js';
import { ACTION_IDS } from '../../../src/slack/ids.js';
import { reply } from '../../support/fake-openai.js';
import type { SlackCall } from '../../support/fake-slack.js';
import { isRecord } from '../../support/json-value.js';
import { blockActionsPayload } from '../../support/slack-payloads.js';
import { postInteraction } from '../../support/slack-requests.js';
import { waitUntil } from '../../support/wait.js';
import { approvalIdOf, cardTs, type Harness, SECRET, startHarness } from '../harness.js';

const ADMIN = 'UADMIN';
const ALICE = 'UALICE';
const BOB = 'UBOB';
const MALLORY = 'UMALLORY';
/** Alice's private channel, where her request's card is posted. */
const PRIVATE = 'GPRIVATE';
/** A channel of Mallory's own, where she can make a button carry any value. */
const ELSEWHERE = 'CMALLORY';
const PLANTED = 'the merger closes on friday';

/**
 * "View all arguments" and its page buttons carry only an approval ID, which cards, reminders and exports
 * print. Whoever clicks must be allowed to see that request: whoever may decide it, its requester, admins and
 * members of the conversation it was posted in. Anyone else is answered as for an unknown request.
 */
describe('the arguments modal shows a request only to those who may see it', () => {
  let h: Harness;
  let card: SlackCall;
  let approvalId: string;

  beforeEach(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN } });
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: PLANTED } }]));
    await h.mention('note the date', { user: ALICE, channel: PRIVATE });
    const [found] = await h.waitForCards(1);
    if (!found) throw new Error('no card');
    card = found;
    approvalId = approvalIdOf(card);
  });
  afterEach(async () => {
    await h.close();
  });

  /** `user` clicks a button carrying `value` on a message in `channel`, or inside an open modal. */
  const click = (
    user: string,
    actionId: string,
    value: string,
    from: { channel: string } | { view: { id: string; private_metadata?: string } },
  ) => {
    const payload = blockActionsPayload({
      userId: user,
      channelId: 'channel' in from ? from.channel : PRIVATE,
      messageTs: cardTs(card),
      actionId,
      value,
    });
    if ('view' in from) {
      delete payload.channel;
      delete payload.message;
      payload.container = { type: 'view', view_id: from.view.id };
      payload.view = { type: 'modal', ...from.view };
    }
    return postInteraction(h.url, SECRET, payload);
  };

  const opened = () => h.slack.callsTo('views.open').length + h.slack.callsTo('views.update').length;

  /** The bot's "unknown request" answers to `user`: ephemeral under a card, by direct message from a modal. */
  const unknownTo = (user: string) =>
    h.slack.calls.filter(
      (c) =>
        c.params.text === UNKNOWN_BUTTON &&
        ((c.method === 'chat.postEphemeral' && c.params.user === user) ||
          (c.method === 'chat.postMessage' && c.params.channel === user)),
    );

  /** Waits for the bot's `nth` private "unknown request" answer to `user`; no modal was shown, nothing leaked. */
  const refused = async (user: string, modalsBefore: number, nth = 1) => {
    await waitUntil(() => unknownTo(user).length >= nth || undefined, {
      timeoutMs: 10_000,
      message: `expected ${user} to be told the request is unknown`,
    });
    expect(opened()).toBe(modalsBefore);
    const toUser = h.slack.calls.filter((c) => JSON.stringify(c.params).includes(user));
    expect(JSON.stringify(toUser)).not.toContain(PLANTED);
  };

  it('a member outside the conversation who puts the ID into a button of their own learns nothing', async () => {
    const before = opened();
    const response = await click(MALLORY, ACTION_IDS.viewArguments, approvalId, { channel: ELSEWHERE });
    expect(response.status).toBe(200);
    await refused(MALLORY, before);
  });

  it('nor through a page button, with or without metadata of a modal opened by someone else', async () => {
    await click(BOB, ACTION_IDS.viewArguments, approvalId, { channel: PRIVATE });
    const bobs = await h.slack.waitForCall('views.open');
    const view = bobs.params.view;
    if (!isRecord(view) || typeof view.private_metadata !== 'string') throw new Error('no metadata');
    expect(JSON.stringify(view)).toContain(PLANTED);

    const before = opened();
    await click(MALLORY, ACTION_IDS.argumentsPage, `1:${approvalId}`, { view: { id: 'VMAL' } });
    await refused(MALLORY, before);
    await click(MALLORY, ACTION_IDS.argumentsPage, `1:${approvalId}`, {
      view: { id: 'VMAL', private_metadata: view.private_metadata },
    });
    await refused(MALLORY, before, 2);
  });

  it('a member of the conversation reads it from the card, and pages on inside the modal', async () => {
    await click(BOB, ACTION_IDS.viewArguments, approvalId, { channel: PRIVATE });
    const shown = await h.slack.waitForCall('views.open');
    expect(JSON.stringify(shown.params.view)).toContain(PLANTED);
    const view = shown.params.view;
    if (!isRecord(view) || typeof view.private_metadata !== 'string') throw new Error('no metadata');
    await click(BOB, ACTION_IDS.argumentsPage, `1:${approvalId}`, {
      view: { id: 'VBOB', private_metadata: view.private_metadata },
    });
    const paged = await h.slack.waitForCall('views.update');
    expect(JSON.stringify(paged.params.view)).toContain(PLANTED);
  });

  it('its requester and admins read it from anywhere', async () => {
    for (const [user, count] of [
      [ALICE, 1],
      [ADMIN, 2],
    ] as const) {
      await click(user, ACTION_IDS.viewArguments, approvalId, { channel: ELSEWHERE });
      await waitUntil(() => h.slack.callsTo('views.open').length >= count || undefined, {
        timeoutMs: 10_000,
        message: `expected ${user} to see the arguments`,
      });
    }
    for (const shown of h.slack.callsTo('views.open'))
      expect(JSON.stringify(shown.params.view)).toContain(PLANTED);
    expect([...unknownTo(ALICE), ...unknownTo(ADMIN)]).toEqual([]);
  });
});
