import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signInWithLink } from '../support/console-client.js';
import { reply } from '../support/fake-openai.js';
import { enableInstalls, installWorkspace, oauthEnv } from '../support/oauth-installs.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import {
  appMentionEvent,
  eventEnvelope,
  nextTs,
  postEvent,
  postInteraction,
  postSlashCommand,
  slashCommandBody,
} from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { approvalIdOf, cardTs, type Harness, SECRET, startHarness } from './harness.js';

/**
 * Installed into two workspaces, each one's people see and decide only its own requests: a person of T2 who
 * names T1's request (a forged button, `/approvals show`, App Home, the console) gets what an unknown ID gets,
 * and the attempt is audited in T2.
 */
describe('data stays per workspace (OAuth, two workspaces)', () => {
  let h: Harness;
  let base: string;
  let env: Record<string, string>;
  beforeEach(async () => {
    env = oauthEnv();
    h = await startHarness({ env });
    base = new URL(h.url).origin;
    enableInstalls(h.slack, base);
    await installWorkspace(h.slack, base, { teamId: 'T1AAA', userId: 'UONE' });
    await installWorkspace(h.slack, base, { teamId: 'T2BBB', userId: 'UTWO' });
  });
  afterEach(async () => h.close());

  /** A pending request of T1 (delete_note: admins only, so T1's installer may decide it). */
  async function requestInT1(): Promise<{
    id: string;
    card: Awaited<ReturnType<Harness['slack']['waitForCall']>>;
  }> {
    h.model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 1 } }]));
    const event = appMentionEvent({
      user: 'UREQ',
      channel: 'CT1AAA',
      text: '<@UBOT> delete it',
      ts: nextTs(),
      team: 'T1AAA',
    });
    expect((await postEvent(h.url, SECRET, eventEnvelope(event, { teamId: 'T1AAA' }))).status).toBe(200);
    const card = await h.slack.waitForCall(
      'chat.postMessage',
      (c) => c.params.channel === 'CT1AAA' && Boolean(c.params.blocks),
    );
    return { id: approvalIdOf(card), card };
  }

  const statusOf = async (id: string) =>
    (await rows(h.database, `select status from approvals where id = '${id}'`))[0]?.status;

  const approvals = async (teamId: string, userId: string, text: string) => {
    const id = randomUUID();
    const fields = slashCommandBody({
      command: '/approvals',
      text,
      userId,
      teamId,
      channelId: `C${teamId}`,
      responseUrl: h.slack.responseUrl(id),
    });
    expect((await postSlashCommand(h.url, SECRET, fields)).status).toBe(200);
    const answer = await h.slack.waitForCall('response_url', (c) => c.params.responseUrlId === id);
    return JSON.stringify(answer.params);
  };

  it("T2's admin clicking a forged button with T1's request ID is refused as an unknown ID, audited in T2", async () => {
    const { id, card } = await requestInT1();
    const forged = blockActionsPayload({
      userId: 'UTWO',
      teamId: 'T2BBB',
      channelId: 'CT1AAA',
      messageTs: cardTs(card),
      threadTs: String(card.params.thread_ts),
      actionId: 'approval:approve',
      value: id,
    });
    expect((await postInteraction(h.url, SECRET, forged)).status).toBe(200);
    await waitUntil(
      async () =>
        (await rows(h.database, "select team_id from audit_events where kind = 'approval.refused'")).length >
        0,
    );
    const refused = await rows(
      h.database,
      "select team_id, approval_id, actor, payload from audit_events where kind = 'approval.refused'",
    );
    expect(refused).toEqual([
      expect.objectContaining({ team_id: 'T2BBB', approval_id: null, actor: 'UTWO' }),
    ]);
    expect(JSON.parse(String(refused[0]?.payload))).toMatchObject({
      reason: 'unknown_request',
      requested: id,
    });
    expect(await statusOf(id)).toBe('pending');

    // The same click by T1's installer (an admin of T1) decides it: the refusal above was the workspace's.
    h.model.enqueue(reply.text('Deleted.'));
    const own = {
      ...forged,
      user: { id: 'UONE', username: 'one', team_id: 'T1AAA' },
      team: { id: 'T1AAA', domain: 't' },
    };
    expect((await postInteraction(h.url, SECRET, own)).status).toBe(200);
    await waitUntil(async () => (await statusOf(id)) !== 'pending');
    expect(await statusOf(id)).not.toBe('pending');
  });

  it("/approvals, App Home and the console of T2 show nothing of T1's request; T1's show it", async () => {
    const { id } = await requestInT1();
    // /approvals: T2's admin reads T2 only; `show` of T1's ID is the unknown-ID answer.
    expect(await approvals('T2BBB', 'UTWO', `show ${id}`)).toContain(`There is no request`);
    expect(await approvals('T2BBB', 'UTWO', 'pending')).not.toContain(id);
    expect(await approvals('T1AAA', 'UONE', 'pending')).toContain(id);
    // T1's installer is nobody in T2: the command is refused to them there.
    expect(await approvals('T2BBB', 'UONE', 'pending')).toContain('for admins only');

    // App Home: each installer's Home lists its own workspace's requests.
    const home = async (teamId: string, user: string) => {
      const before = h.slack.callsTo('views.publish').length;
      const opened = eventEnvelope(
        { type: 'app_home_opened', user, channel: 'D0HOME', tab: 'home', event_ts: '1700000000.000100' },
        { teamId },
      );
      expect((await postEvent(h.url, SECRET, opened)).status).toBe(200);
      const published = await waitUntil(() =>
        h.slack
          .callsTo('views.publish')
          .slice(before)
          .find((c) => c.params.user_id === user),
      );
      return JSON.stringify(published.params.view);
    };
    expect(await home('T1AAA', 'UONE')).toContain(id);
    expect(await home('T2BBB', 'UTWO')).not.toContain(id);

    // The console: a session of T2 gets T1's request as it gets an unknown one, and cannot decide it.
    const dbEnv = { DATABASE_PATH: h.dbPath };
    const two = await signInWithLink(base, dbEnv, 'UTWO', 'T2BBB');
    const one = await signInWithLink(base, dbEnv, 'UONE', 'T1AAA');
    expect((await one.get(`/console/api/approvals/${id}`)).status).toBe(200);
    const seen = await two.get(`/console/api/approvals/${id}`);
    const unknown = await two.get('/console/api/approvals/apr_0000000000000000');
    expect([seen.status, await seen.text()]).toEqual([unknown.status, await unknown.text()]);
    expect(JSON.stringify(await (await two.get('/console/api/approvals')).json())).not.toContain(id);
    expect(JSON.stringify(await (await one.get('/console/api/approvals')).json())).toContain(id);
    const decided = await two.postJson(`/console/api/approvals/${id}/decision`, { decision: 'approve' });
    expect(decided.status).toBeGreaterThanOrEqual(400);
    expect(await statusOf(id)).toBe('pending');
    const refused = await rows(
      h.database,
      "select team_id from audit_events where kind = 'approval.refused'",
    );
    expect(refused.map((r) => r.team_id)).toEqual(['T2BBB']);
  });
});
