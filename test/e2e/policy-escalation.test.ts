import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { type SlackCall, slackReply } from '../support/fake-slack.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import { postInteraction } from '../support/slack-requests.js';
import { DATABASE_KINDS } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { approvalIdOf, cardTs, type Harness, SECRET } from './harness.js';
import { blocksText, FakeClock, HOUR, query, startPolicyHarness } from './policy-support.js';

describe.each(DATABASE_KINDS)('approval policy on %s: escalation', (kind) => {
  const open: Harness[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
  });
  const start = async (policy: unknown, clock: FakeClock) => {
    const h = await startPolicyHarness(policy, { overrides: { clock }, kind });
    h.slack.setResponse('usergroups.users.list', (params) =>
      params.usergroup === 'S0ONCALL' ? slackReply.ok({ users: ['U0PAGER'] }) : slackReply.ok({ users: [] }),
    );
    open.push(h);
    return h;
  };
  const escalations = (h: Harness) =>
    query(h.database, "SELECT payload FROM audit_events WHERE kind = 'approval.escalated'");
  const ephemerals = (h: Harness) => h.slack.callsTo('chat.postEphemeral').map((c) => String(c.params.text));
  const dmTo = (h: Harness, user: string) =>
    h.slack
      .callsTo('chat.postMessage')
      .filter(
        (c) => c.params.channel === user && JSON.stringify(c.params.blocks ?? '').includes('approval:'),
      );
  const clickIn = (h: Harness, card: SlackCall, user: string) =>
    postInteraction(
      h.url,
      SECRET,
      blockActionsPayload({
        userId: user,
        // A direct message's channel: Slack names it D…, whatever user ID it was posted to.
        channelId: String(card.params.channel).replace(/^U/, 'D'),
        messageTs: cardTs(card),
        actionId: 'approval:approve',
        value: approvalIdOf(card),
      }),
    );

  it('after escalateAfter, escalateTo may decide too, gets the card by DM, the card says so; audited once', async () => {
    const clock = new FakeClock();
    const h = await start(
      {
        tools: {
          create_note: {
            approvers: ['U0BOSS'],
            expiresAfter: '24h',
            escalateAfter: '2h',
            escalateTo: ['S0ONCALL'],
          },
        },
      },
      clock,
    );
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'urgent' } }]),
      reply.text('Noted.'),
    );
    await h.mention('add an urgent note', { user: 'U1' });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');

    // Before the escalation the on-call person may not decide.
    await h.click(card, 'approve', 'U0PAGER');
    await waitUntil(() => ephemerals(h)[0]);
    expect(ephemerals(h)[0]).toBe('You cannot decide this request. It can be decided by <@U0BOSS>.');
    clock.advance(2 * HOUR - 1);
    await h.bot.checkDeadlines();
    expect(await escalations(h)).toEqual([]);

    clock.advance(1);
    await h.bot.checkDeadlines();
    await h.bot.checkDeadlines();
    const audited = await escalations(h);
    expect(audited.map((row) => JSON.parse(String(row.payload)))).toEqual([
      { tool: 'create_note', after: '2h', escalateTo: ['S0ONCALL'] },
    ]);
    const notice = await h.waitForText((t) => t.includes('was escalated to'));
    expect(notice).toContain(
      'waited 2h and was escalated to <!subteam^S0ONCALL>, who may now decide it too.',
    );
    // Posted with previews off, as every message of the bot is.
    const posted = h.slack
      .callsTo('chat.postMessage')
      .find((c) => String(c.params.text).includes('was escalated to'));
    expect(posted?.params).toMatchObject({ unfurl_links: 'false', unfurl_media: 'false' });
    const [copy] = await waitUntil(() => (dmTo(h, 'U0PAGER').length === 1 ? dmTo(h, 'U0PAGER') : undefined));
    if (!copy) throw new Error('no DM');
    const updated = await h.slack.waitForCall('chat.update', (c) => c.params.ts === cardTs(card));
    expect(blocksText(updated)).toContain('escalated to <!subteam^S0ONCALL>');
    expect(blocksText(updated)).toContain('approval:approve');

    await clickIn(h, copy, 'U0PAGER');
    await h.waitForText((t) => t === 'Noted.');
    expect(await query(h.database, 'SELECT status, decided_by FROM approvals')).toEqual([
      { status: 'executed', decided_by: 'U0PAGER' },
    ]);
  });

  /** A create_note request for U0BOSS that waited 2 h and was escalated to U0PAGER. */
  const escalatedRequest = async () => {
    const clock = new FakeClock();
    const h = await start(
      { tools: { create_note: { approvers: ['U0BOSS'], escalateAfter: '2h', escalateTo: ['U0PAGER'] } } },
      clock,
    );
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'urgent' } }]),
      reply.text('Noted.'),
    );
    await h.mention('add an urgent note', { user: 'U1' });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    clock.advance(2 * HOUR);
    await h.bot.checkDeadlines();
    await h.waitForText((t) => t.includes('was escalated to'));
    return { h, card };
  };

  it('someone allowed only through the escalation approves the call, not the whole thread (their grant could never apply)', async () => {
    const { h, card } = await escalatedRequest();

    await h.click(card, 'approve_thread', 'U0PAGER');
    await waitUntil(() => ephemerals(h)[0]);
    expect(ephemerals(h)[0]).toBe(
      'You may decide this request only because it was escalated, so you cannot approve create_note for the whole thread; approve this call on its own.',
    );
    expect(await query(h.database, 'SELECT status FROM approvals')).toEqual([{ status: 'pending' }]);
    expect(await query(h.database, 'SELECT granted_by FROM standing_approvals')).toEqual([]);

    await h.click(card, 'approve', 'U0PAGER');
    await h.waitForText((t) => t === 'Noted.');
    expect(await query(h.database, 'SELECT status, decided_by FROM approvals')).toEqual([
      { status: 'executed', decided_by: 'U0PAGER' },
    ]);
  });

  it('a decision refreshes the Home of someone the request was escalated to', async () => {
    const { h, card } = await escalatedRequest();

    const homes = () => h.slack.callsTo('views.publish').filter((c) => c.params.user_id === 'U0PAGER');
    await h.sendEvent({ type: 'app_home_opened', user: 'U0PAGER', channel: 'D0HOME', tab: 'home' });
    const [first] = await waitUntil(() => (homes().length === 1 ? homes() : undefined));
    expect(JSON.stringify(first?.params.view)).toContain(approvalIdOf(card));

    await h.click(card, 'approve', 'U0BOSS');
    await h.waitForText((t) => t === 'Noted.');
    const [, second] = await waitUntil(() => (homes().length === 2 ? homes() : undefined), {
      message: 'the Home of the person the request was escalated to was not refreshed',
    });
    expect(JSON.stringify(second?.params.view)).not.toContain(approvalIdOf(card));
  });

  it('expiry wins when it comes first: an expired request is never escalated', async () => {
    const clock = new FakeClock();
    const h = await start(
      { tools: { create_note: { expiresAfter: '1h', escalateAfter: '2h', escalateTo: ['U0PAGER'] } } },
      clock,
    );
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'late' } }]),
      reply.text('Expired.'),
    );
    await h.mention('add a note', { user: 'U1' });
    await h.waitForCards(1);
    clock.advance(3 * HOUR);
    await h.bot.checkDeadlines();
    await h.waitForText((t) => t === 'Expired.');
    expect(await escalations(h)).toEqual([]);
    expect(dmTo(h, 'U0PAGER')).toEqual([]);
    expect(await query(h.database, 'SELECT status FROM approvals')).toEqual([{ status: 'expired' }]);
  });
});
