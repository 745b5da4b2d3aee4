import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ACTION_IDS } from '../../src/slack/ids.js';
import { type SeedApproval, seedApprovals } from '../support/audit-seed.js';
import { reply } from '../support/fake-openai.js';
import { eventEnvelope, postEvent } from '../support/slack-requests.js';
import { DATABASE_KINDS } from '../support/test-database.js';
import { execute } from './db-rows.js';
import { rejectWithModal, submitModal } from './decision-modals.js';
import { approvalIdOf, cardTs, type Harness, SECRET, startHarness } from './harness.js';
import { clickInHome } from './home-clicks.js';

const ADMIN = 'UADMIN';

describe.each(DATABASE_KINDS)('App Home on %s', (kind) => {
  let h: Harness;

  const seed = (...seeds: SeedApproval[]) => seedApprovals(h.database, ...seeds);
  const openHome = async (user: string, tab: 'home' | 'messages' = 'home') => {
    const response = await postEvent(
      h.url,
      SECRET,
      eventEnvelope({ type: 'app_home_opened', user, channel: 'D0HOME', tab, event_ts: '1700000000.000100' }),
    );
    expect(response.status).toBe(200);
  };
  const publishes = (user: string) =>
    h.slack.callsTo('views.publish').filter((c) => c.params.user_id === user);
  /** Waits for the `n`-th Home view published for `user` and returns its blocks. */
  const homeView = async (user: string, n = 1) => {
    await h.slack.waitForCall('views.publish', () => publishes(user).length >= n);
    const view = publishes(user)[n - 1]?.params.view as { type: string; blocks: unknown[] };
    expect(view.type).toBe('home');
    return view.blocks;
  };
  const clickHome = (user: string, approvalId: string, action: 'approve' | 'reject') =>
    clickInHome(h, user, { actionId: ACTION_IDS[action], value: approvalId });

  beforeEach(async () => {
    h = await startHarness({ kind, env: { ADMIN_USER_IDS: ADMIN } });
  });
  afterEach(async () => {
    await h.close();
  });

  it('an admin with 500 pending approvals gets a view within 100 blocks, with the card buttons', async () => {
    await seed(...Array.from({ length: 500 }, (_, i) => ({ createdAt: Date.now() - (500 - i) * 1000 })));
    await seed(...Array.from({ length: 25 }, () => ({ status: 'rejected' as const, decidedBy: 'U22' })));
    await openHome(ADMIN);
    const blocks = await homeView(ADMIN);
    expect(blocks.length).toBeLessThanOrEqual(100);
    const text = JSON.stringify(blocks);
    expect(text).toContain('Pending approvals (500)');
    expect(text).toContain('470 more not shown');
    // The same buttons as the card (create_note allows standing approvals: Approve for this thread too).
    for (const actionId of [ACTION_IDS.approve, ACTION_IDS.approveThread, ACTION_IDS.edit, ACTION_IDS.reject])
      expect(text.split(`"action_id":"${actionId}"`)).toHaveLength(31);
    expect(text).toContain('Latest decisions');
    expect(text.match(/rejected by <@U22>/g)).toHaveLength(20);
  });

  it('only the Home tab is published; the Messages tab is left to the conversation', async () => {
    await openHome('U5', 'messages');
    await openHome('U6', 'home');
    await homeView('U6');
    expect(publishes('U5')).toHaveLength(0);
  });

  it('others see the requests waiting for them, with buttons, and their own requests', async () => {
    const [forU7, mine] = await seed(
      { toolName: 'delete_note', approvers: ['U77'], requesterId: 'U1' },
      { toolName: 'create_note', requesterId: 'U77', status: 'rejected', decidedBy: 'U22' },
      { toolName: 'post_message', approvers: ['admins'], requesterId: 'U1' },
    );
    await openHome('U77');
    const text = JSON.stringify(await homeView('U77'));
    expect(text).toContain('Waiting for your decision (1)');
    expect(text).toContain(`"value":"${forU7}"`);
    expect(text).toContain('Your requests');
    expect(text).toContain(String(mine));
    expect(text).not.toContain('post_message');
  });

  it('an admin sees the buttons of a request escalated to admins, and not before its escalation', async () => {
    const escalation = { escalateTo: ['admins'], escalateAfterMs: 3_600_000 };
    const [escalated, waiting] = await seed(
      { approvers: ['U0BOSS'], rule: { ...escalation, escalatedAt: Date.now() } },
      { approvers: ['U0BOSS'], rule: escalation },
    );
    await openHome(ADMIN);
    const text = JSON.stringify(await homeView(ADMIN));
    expect(text).toContain('Pending approvals (2)');
    // Approve is the card's one primary button.
    expect(text).toContain(`"style":"primary","value":"${escalated}"`);
    expect(text).not.toContain(`"style":"primary","value":"${waiting}"`);
  });

  it('a decision taken in Home updates the card in the thread, resumes the run and refreshes the view', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'from home' } }]),
      reply.text('Noted.'),
    );
    await h.mention('note: from home');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const approvalId = approvalIdOf(card);
    await openHome(ADMIN);
    expect(JSON.stringify(await homeView(ADMIN))).toContain(`"value":"${approvalId}"`);

    expect((await clickHome(ADMIN, approvalId, 'approve')).status).toBe(200);
    const update = await h.slack.waitForCall('chat.update');
    expect(update.params.channel).toBe(card.params.channel);
    expect(update.params.ts).toBe(cardTs(card));
    expect(JSON.stringify(update.params.blocks)).toContain(`Approved by <@${ADMIN}>`);
    await h.waitForText((text) => text === 'Noted.');
    const refreshed = JSON.stringify(await homeView(ADMIN, 2));
    expect(refreshed).toContain('Pending approvals (0)');
    expect(refreshed).toContain(`approved by <@${ADMIN}>`);
  });

  it('Reject in Home opens the reason form; its submission updates the card in the thread', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'no' } }]),
      reply.text('Fine.'),
    );
    await h.mention('note: no');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await openHome(ADMIN);
    await homeView(ADMIN);
    await clickHome(ADMIN, approvalIdOf(card), 'reject');
    const opened = await h.slack.waitForCall('views.open');
    const view = opened.params.view as { private_metadata: string; callback_id: string };
    await submitModal(h, { privateMetadata: view.private_metadata, callbackId: view.callback_id }, ADMIN, {
      reason: { reason_input: { type: 'plain_text_input', value: 'not today' } },
    });
    const update = await h.slack.waitForCall('chat.update');
    expect(update.params.channel).toBe(card.params.channel);
    expect(update.params.ts).toBe(cardTs(card));
    expect(JSON.stringify(update.params.blocks)).toContain(`Rejected by <@${ADMIN}>`);
    await h.waitForText((text) => text === 'Fine.');
    expect(JSON.stringify(await homeView(ADMIN, 2))).toContain(`rejected by <@${ADMIN}>`);
  });

  it('a decision taken on the card refreshes the Home of an admin who opened it', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]),
      reply.text('Done.'),
    );
    await h.mention('note x');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await openHome(ADMIN);
    expect(JSON.stringify(await homeView(ADMIN))).toContain('Pending approvals (1)');
    await rejectWithModal(h, card, 'U2');
    expect(JSON.stringify(await homeView(ADMIN, 2))).toContain('Pending approvals (0)');
  });

  it('an expiry refreshes the Home of an admin who opened it', async () => {
    const [id] = await seed({ toolName: 'delete_note', approvers: ['admins'] });
    await openHome(ADMIN);
    expect(JSON.stringify(await homeView(ADMIN))).toContain('Pending approvals (1)');
    expect(
      await execute(h.database, 'UPDATE approvals SET expires_at = ? WHERE id = ?', Date.now() - 1000, id),
    ).toBe(1);
    await h.bot.checkDeadlines();
    const refreshed = JSON.stringify(await homeView(ADMIN, 2));
    expect(refreshed).toContain('Pending approvals (0)');
    expect(refreshed).toContain(':hourglass: `delete_note`');
  });

  it('a refused click in Home is explained in a direct message', async () => {
    const [id] = await seed({ toolName: 'delete_note', approvers: ['admins'] });
    await clickHome('U2', String(id), 'approve');
    const dm = await h.slack.waitForCall('chat.postMessage', (c) => c.params.channel === 'U2');
    expect(String(dm.params.text)).toContain('You cannot decide this request');
  });
});
