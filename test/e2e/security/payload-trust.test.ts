import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seedApprovals } from '../../support/audit-seed.js';
import { reply } from '../../support/fake-openai.js';
import { listenLocal } from '../../support/local-server.js';
import { blockActionsPayload, viewSubmissionPayload } from '../../support/slack-payloads.js';
import {
  eventEnvelope,
  postInteraction,
  postSlashCommand,
  signedPost,
  slashCommandBody,
} from '../../support/slack-requests.js';
import { waitUntil } from '../../support/wait.js';
import { rows } from '../db-rows.js';
import { openModal, submitModal } from '../decision-modals.js';
import { approvalIdOf, cardTs, type Harness, SECRET, startHarness } from '../harness.js';

const ADMIN = 'UADMIN';

describe('no payload field is trusted further than Slack vouches for it', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN } });
  });
  afterEach(async () => {
    await h.close();
  });

  const statuses = async () =>
    (await rows(h.database, 'SELECT id, status FROM approvals ORDER BY created_at, id')).map((r) => r.status);

  it('a click on approval X naming card Y updates only X’s stored card', async () => {
    h.model.enqueue(
      reply.toolCalls([
        { name: 'create_note', arguments: { text: 'x' } },
        { name: 'create_note', arguments: { text: 'y' } },
      ]),
    );
    await h.mention('notes x and y');
    const [x, y] = await h.waitForCards(2);
    if (!x || !y) throw new Error('cards missing');
    await h.bot.conversations.idle();
    h.model.enqueue(reply.text('Both noted.'));
    await postInteraction(
      h.url,
      SECRET,
      blockActionsPayload({
        userId: ADMIN,
        channelId: String(y.params.channel),
        messageTs: cardTs(y),
        threadTs: String(y.params.thread_ts),
        actionId: 'approval:approve',
        value: approvalIdOf(x),
      }),
    );
    await h.slack.waitForCall('chat.update', (call) => call.params.ts === cardTs(x));
    // Y decided as Slack sends it: once the run this settles has answered, X's decision has long been shown.
    await h.click(y, 'approve', ADMIN);
    await h.waitForText((text) => text === 'Both noted.');
    const updatesOfY = h.slack.callsTo('chat.update').filter((call) => call.params.ts === cardTs(y));
    expect(updatesOfY.length).toBeGreaterThan(0);
    for (const update of updatesOfY) {
      expect(JSON.stringify(update.params.blocks)).toContain(approvalIdOf(y));
      expect(JSON.stringify(update.params.blocks)).not.toContain(approvalIdOf(x));
    }
  });

  it('malformed user and team ids are refused at the edge; a Slack payload never decides a terminal request', async () => {
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'guarded' } }]));
    await h.mention('note guarded');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const click = (user: unknown, team = 'T1', value = approvalIdOf(card)) => {
      const payload = blockActionsPayload({
        userId: 'U0',
        teamId: team,
        channelId: String(card.params.channel),
        messageTs: cardTs(card),
        actionId: 'approval:approve',
        value,
      });
      return postInteraction(h.url, SECRET, { ...payload, user: { id: user, team_id: team } });
    };
    expect((await click('U2><!channel')).status).toBe(200);
    expect((await click([ADMIN])).status).toBe(200);
    // A request of the terminal chat (team `local`), decided by a configured admin through a Slack payload.
    const [terminal] = await seedApprovals(h.database, { teamId: 'local', toolName: 'create_note' });
    if (!terminal) throw new Error('no seed');
    expect((await click(ADMIN, 'local', terminal)).status).toBe(200);
    // A well-formed click after them on a button no request has: once it is answered, the clicks before it
    // have been dealt with.
    expect((await click('U9', 'T1', 'no-such-approval')).status).toBe(200);
    await h.slack.waitForCall('chat.postEphemeral', (c) => c.params.user === 'U9');
    await h.bot.conversations.idle();
    expect(await statuses()).toEqual(['pending', 'pending']);
    expect(JSON.stringify(h.slack.calls)).not.toContain('<!channel>');
    expect(h.logs.join('\n')).not.toContain('decision could not be recorded');
    expect(h.logs.filter((line) => line.includes('malformed ids'))).toHaveLength(3);
  });

  it('the Edit form opens only for someone allowed to decide, and never shows them the arguments otherwise', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'post_message', arguments: { channel: 'C0002', text: 'secret plan' } }]),
    );
    await h.mention('post it');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.click(card, 'edit', 'U2');
    await h.click(card, 'reject', 'U2');
    const toldU2 = () => h.slack.callsTo('chat.postEphemeral').filter((c) => c.params.user === 'U2');
    await waitUntil(() => toldU2().length === 2);
    for (const told of toldU2()) expect(told.params.text).toMatch(/You cannot decide this request/);
    const modal = await openModal(h, card, 'edit', ADMIN);
    expect(JSON.stringify(modal.view)).toContain('secret plan');
    expect(h.slack.callsTo('views.open')).toEqual([modal.call]);
  });

  it('the channel in a decision form’s metadata is signed: a crafted one does not make an outsider "in the conversation"', async () => {
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]));
    await h.mention('note x');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const forged = JSON.stringify({ a: approvalIdOf(card), c: 'C1', u: 'U9' });
    const submitted = await postInteraction(
      h.url,
      SECRET,
      viewSubmissionPayload({
        userId: 'U9',
        callbackId: 'approval:reject_modal',
        privateMetadata: forged,
        values: { reason: { reason_input: { type: 'plain_text_input', value: 'no' } } },
      }),
    );
    expect(await submitted.json()).toMatchObject({ response_action: 'errors' });
    // A genuine form opened by someone else cannot be submitted by U9 either.
    const genuine = await openModal(h, card, 'reject', 'U2');
    const stolen = await submitModal(h, genuine, 'U9', {
      reason: { reason_input: { type: 'plain_text_input', value: 'no' } },
    });
    expect(stolen.body).toMatchObject({ response_action: 'errors' });
    expect(await statuses()).toEqual(['pending']);
  });

  it('refuses signatures dated more than 5 minutes ahead (401), as Bolt does for old ones', async () => {
    const body = JSON.stringify(eventEnvelope({ type: 'app_home_opened', user: 'U1', tab: 'home' }));
    const future = Math.floor(Date.now() / 1000) + 10 * 60;
    const ahead = await signedPost(h.url, SECRET, {
      body,
      contentType: 'application/json',
      timestamp: future,
    });
    expect(ahead.status).toBe(401);
    const now = await signedPost(h.url, SECRET, { body, contentType: 'application/json' });
    expect(now.status).toBe(200);
  });

  it('/approvals answers only to a Slack response_url (or SLACK_API_URL’s origin)', async () => {
    const received: string[] = [];
    const elsewhere = await listenLocal(async (req, res) => {
      received.push(req.url ?? '');
      res.writeHead(200).end('{}');
    });
    try {
      const fields = slashCommandBody({
        command: '/approvals',
        text: 'pending',
        userId: ADMIN,
        channelId: 'C1',
        responseUrl: `http://127.0.0.1:${elsewhere.port}/collect`,
      });
      expect((await postSlashCommand(h.url, SECRET, fields)).status).toBe(200);
      // The fake Slack (SLACK_API_URL's origin) still gets answers; the same command sent after the other
      // is answered, so the other has had its turn.
      const answer = await h.approvals('pending', ADMIN);
      expect(answer.params.response_type).toBe('ephemeral');
      await waitUntil(() => h.logs.some((line) => line.includes('/approvals refused')));
      expect(received).toEqual([]);
    } finally {
      await elsewhere.close();
    }
  });
});
