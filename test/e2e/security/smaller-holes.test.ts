import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../../support/fake-openai.js';
import { slackReply } from '../../support/fake-slack.js';
import { rows } from '../db-rows.js';
import { rejectWithModal } from '../decision-modals.js';
import { approvalIdOf, type Harness, startHarness } from '../harness.js';
import { FakeClock, HOUR, startPolicyHarness } from '../policy-support.js';

const ADMIN = 'UADMIN';
/** A Slack workspace admin given audit rights only (AUDIT_INCLUDE_WORKSPACE_ADMINS). */
const WORKSPACE_ADMIN = 'UWSADMIN';
const DAY = 24 * HOUR;

describe('smaller holes', () => {
  let h: Harness;
  let dir: string | undefined;
  afterEach(async () => {
    await h.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
    dir = undefined;
  });

  const openHome = (user: string) =>
    h.sendEvent({ type: 'app_home_opened', user, channel: 'D0HOME', tab: 'home', event_ts: '1.1' });

  it('/healthz answers only its status unless HEALTHZ_DETAILS=true', async () => {
    h = await startHarness();
    const plain = await fetch(h.url.replace('/slack/events', '/healthz'));
    expect(await plain.json()).toEqual({ status: 'ok' });
    await h.close();
    h = await startHarness({ env: { HEALTHZ_DETAILS: 'true' } });
    const detailed = (await (await fetch(h.url.replace('/slack/events', '/healthz'))).json()) as object;
    expect(detailed).toMatchObject({ status: 'ok', mode: 'http', database: 'ok' });
  });

  it('"Approve for this thread" expires (24 h by default) and needs the grantor to still have the right', async () => {
    const clock = new FakeClock();
    dir = mkdtempSync(join(tmpdir(), 'standing-'));
    const dbPath = join(dir, 'bot.db');
    const policy = { tools: { create_note: { approvers: ['admins'], allowStandingApproval: true } } };
    h = await startPolicyHarness(policy, { overrides: { clock }, dbPath });
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'one' } }]),
      reply.text('One.'),
    );
    const ts = await h.mention('add one');
    const [first] = await h.waitForCards(1);
    if (!first) throw new Error('no card');
    await h.click(first, 'approve_thread', ADMIN);
    await h.waitForText((text) => text === 'One.');
    // Within the day: covered.
    clock.advance(23 * HOUR);
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'two' } }]),
      reply.text('Two.'),
    );
    await h.message('add two', { threadTs: ts });
    await h.waitForText((text) => text === 'Two.');
    expect(h.cards()).toHaveLength(1);
    // After the day: asks again.
    clock.advance(2 * HOUR);
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'three' } }]));
    await h.message('add three', { threadTs: ts });
    await h.waitForCards(2);
    await h.close();

    // A fresh grant, then the grantor stops being an admin: the grant no longer covers anything.
    h = await startPolicyHarness(policy, { overrides: { clock }, dbPath });
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'four' } }]),
      reply.text('Four.'),
    );
    const ts2 = await h.mention('add four');
    const [fourth] = await h.waitForCards(1);
    if (!fourth) throw new Error('no card');
    await h.click(fourth, 'approve_thread', ADMIN);
    await h.waitForText((text) => text === 'Four.');
    await h.close();
    h = await startPolicyHarness(policy, { overrides: { clock }, dbPath, env: { ADMIN_USER_IDS: 'UOTHER' } });
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'five' } }]));
    await h.message('add five', { threadTs: ts2 });
    await h.waitForCards(1);
    expect(await rows(h.database, "SELECT status FROM approvals WHERE arguments LIKE '%five%'")).toEqual([
      { status: 'pending' },
    ]);
  });

  it('workspace admins with audit rights cannot revoke and see no buttons they cannot use; show says "rejected"', async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN, AUDIT_INCLUDE_WORKSPACE_ADMINS: 'true' } });
    h.slack.setResponse('users.info', (params) =>
      params.user === WORKSPACE_ADMIN
        ? slackReply.ok({ user: { id: WORKSPACE_ADMIN, is_admin: true, is_owner: false } })
        : h.slack.defaultReply('users.info', params),
    );
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'one' } }]),
      reply.text('One.'),
    );
    await h.mention('add one');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.click(card, 'approve_thread', 'U2');
    await h.waitForText((text) => text === 'One.');
    const id = approvalIdOf(card);
    const refused = await h.approvals(`revoke ${id}`, WORKSPACE_ADMIN);
    expect(String(refused.params.text)).toContain('Only the admins of this workspace can revoke');
    expect(await rows(h.database, 'SELECT revoked_at FROM standing_approvals')).toEqual([
      { revoked_at: null },
    ]);

    // A pending admins-only request: the auditor sees it in App Home without buttons; the admin with them.
    h.model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 1 } }]), reply.text('Kept.'));
    await h.mention('delete note 1');
    const [pending] = await h.waitForCards(2).then((cards) => cards.slice(1));
    if (!pending) throw new Error('no card');
    await openHome(WORKSPACE_ADMIN);
    const auditorView = await h.slack.waitForCall(
      'views.publish',
      (c) => c.params.user_id === WORKSPACE_ADMIN,
    );
    const auditorText = JSON.stringify(auditorView.params.view);
    expect(auditorText).toContain('delete_note');
    expect(auditorText).not.toContain('approval:approve');
    await openHome(ADMIN);
    const adminView = await h.slack.waitForCall('views.publish', (c) => c.params.user_id === ADMIN);
    expect(JSON.stringify(adminView.params.view)).toContain('approval:approve');

    await rejectWithModal(h, pending, ADMIN, 'no');
    await h.waitForText((text) => text === 'Kept.');
    const show = await h.approvals(`show ${approvalIdOf(pending)}`, ADMIN);
    const shown = JSON.stringify(show.params.blocks);
    expect(shown).toContain(`<@${ADMIN}> rejected`);
    expect(shown).not.toContain('rejectd');
  });

  it('refused clicks are limited per person: past 5 a minute, no audit row and no reply', async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN } });
    h.model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 1 } }]));
    await h.mention('delete note 1');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    for (let i = 0; i < 12; i += 1) expect((await h.click(card, 'approve', 'U2')).status).toBe(200);
    // Someone else refused after them: once they are told, every click of U2's has been decided.
    expect((await h.click(card, 'approve', 'U3')).status).toBe(200);
    await h.slack.waitForCall('chat.postEphemeral', (c) => c.params.user === 'U3');
    await h.bot.conversations.idle();
    expect(h.slack.callsTo('chat.postEphemeral').filter((c) => c.params.user === 'U2')).toHaveLength(5);
    expect(
      await rows(
        h.database,
        "SELECT actor, COUNT(*) AS n FROM audit_events WHERE kind = 'approval.refused' GROUP BY actor ORDER BY actor",
      ),
    ).toEqual([
      { actor: 'U2', n: 5 },
      { actor: 'U3', n: 1 },
    ]);
  });

  it('App Home viewers are bounded: whoever opened it more than a week ago is forgotten (and never refreshed)', async () => {
    const clock = new FakeClock();
    h = await startPolicyHarness({}, { overrides: { clock } });
    await openHome(ADMIN);
    await h.slack.waitForCall('views.publish', (c) => c.params.user_id === ADMIN);
    clock.advance(8 * DAY);
    await openHome('U1');
    await h.slack.waitForCall('views.publish', (c) => c.params.user_id === 'U1');
    expect(await rows(h.database, 'SELECT user_id FROM home_viewers')).toEqual([{ user_id: 'U1' }]);
    // A decision refreshes the Home of the requester who opened it lately, not the admin's of a week ago.
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]),
      reply.text('Noted.'),
    );
    await h.mention('note x');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Noted.');
    await h.slack.waitForCall('views.publish', () => h.slack.callsTo('views.publish').length >= 3);
    const published = h.slack.callsTo('views.publish').map((c) => c.params.user_id);
    expect(published.filter((user) => user === ADMIN)).toHaveLength(1);
  });
});
