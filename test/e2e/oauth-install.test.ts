import { randomBytes } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import type { SlackCall } from '../support/fake-slack.js';
import { enableInstalls, install, installWorkspace, oauthEnv } from '../support/oauth-installs.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import {
  appMentionEvent,
  eventEnvelope,
  nextTs,
  postEvent,
  postInteraction,
} from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { approvalIdOf, cardTs, type Harness, SECRET, startHarness } from './harness.js';
import { installationsRefusedOnce, mentionIn } from './oauth-support.js';

describe('installs into several workspaces (OAuth)', () => {
  let h: Harness;
  let base: string;
  beforeEach(async () => {
    h = await startHarness({ env: oauthEnv() });
    base = new URL(h.url).origin;
    enableInstalls(h.slack, base);
  });
  afterEach(async () => h.close());

  const mention = (teamId: string, text: string) => mentionIn(h, teamId, text);
  const cardIn = (teamId: string) =>
    h.slack.waitForCall(
      'chat.postMessage',
      (c) => c.params.channel === `C${teamId}` && Boolean(c.params.blocks),
    );

  it('two workspaces install; each conversation, card and decision goes out with its own token; T2 uninstalled is refused after', async () => {
    h.slack.oauth.installAs({ teamId: 'T1', teamName: 'Acme' });
    const t1 = await install(h.slack, base);
    expect(t1.status).toBe(200);
    expect(t1.page).toContain('The app is installed in the workspace Acme');
    h.slack.oauth.installAs({ teamId: 'T2', teamName: 'Globex' });
    expect((await install(h.slack, base)).status).toBe(200);
    // The state and the code of T1's install are used: the same redirect again stores nothing.
    const replay = await fetch(t1.redirect, { headers: { cookie: t1.cookie } });
    expect(replay.status).toBe(400);
    expect(await replay.text()).toContain('it was used already');

    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'one' } }]));
    await mention('T1', 'note one');
    const card1 = await cardIn('T1');
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'two' } }]));
    await mention('T2', 'note two');
    const card2 = await cardIn('T2');
    h.model.enqueue(reply.text('Noted in T1.'));
    const click = blockActionsPayload({
      userId: 'UT1',
      teamId: 'T1',
      channelId: 'CT1',
      messageTs: cardTs(card1),
      threadTs: String(card1.params.thread_ts),
      actionId: 'approval:approve',
      value: approvalIdOf(card1),
    });
    expect((await postInteraction(h.url, SECRET, click)).status).toBe(200);
    await h.slack.waitForCall('chat.update', (c) => c.params.channel === 'CT1');
    await h.waitForText((text) => text === 'Noted in T1.');

    // Every call the fake saw for a channel of a team carried that team's token.
    const teamOfChannel = (call: SlackCall) => /^C(T\d)$/.exec(String(call.params.channel ?? ''))?.[1];
    const routed = h.slack.calls.filter((call) => teamOfChannel(call) !== undefined);
    expect(routed.length).toBeGreaterThan(4);
    for (const call of routed)
      expect([call.method, h.slack.oauth.teamOf(call.token)]).toEqual([call.method, teamOfChannel(call)]);
    expect(
      h.slack.calls.filter((call) => call.reply && JSON.stringify(call.reply).includes('invalid_auth')),
    ).toEqual([]);

    // T2 removes the app: its tokens are deleted and audited; a later call for T2 is never made with them.
    h.slack.oauth.revoke('T2');
    const uninstall = eventEnvelope({ type: 'app_uninstalled' }, { teamId: 'T2' });
    expect((await postEvent(h.url, SECRET, uninstall)).status).toBe(200);
    await waitUntil(
      async () =>
        (await rows(h.database, "select id from slack_installations where id = 'T:T2'")).length === 0,
    );
    const audited = await rows(
      h.database,
      "select team_id, payload from audit_events where kind = 'installation.removed'",
    );
    expect(audited).toHaveLength(1);
    expect(String(audited[0]?.payload)).toContain('app_uninstalled');
    const before = h.slack.calls.length;
    const reject = blockActionsPayload({
      userId: 'UT2',
      teamId: 'T2',
      channelId: 'CT2',
      messageTs: cardTs(card2),
      threadTs: String(card2.params.thread_ts),
      actionId: 'approval:approve',
      value: approvalIdOf(card2),
    });
    h.model.enqueue(reply.text('Noted in T2.'));
    expect((await postInteraction(h.url, SECRET, reject)).status).toBe(200);
    await waitUntil(() =>
      h.logs.some((line) => line.includes('slack call without a token') && line.includes('T2')),
    );
    expect(h.slack.calls.slice(before).filter((call) => teamOfChannel(call) === 'T2')).toEqual([]);
    expect(h.logs.find((line) => line.includes('slack call without a token'))).toContain(
      'install the app there again from /slack/install',
    );
  });

  it('a cancelled install, a forged state and a state from another browser store nothing and say so', async () => {
    h.slack.oauth.installAs('deny');
    const denied = await install(h.slack, base);
    expect(denied.status).toBe(200);
    expect(denied.page).toContain('The install was cancelled in Slack; nothing was stored.');
    h.slack.oauth.installAs({ teamId: 'T3' });
    const start = await fetch(`${base}/slack/install`);
    const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
    const forged = `${cookie.split('=')[1]?.split('.')[0]}.${randomBytes(32).toString('base64url')}`;
    const refused = await fetch(`${base}/slack/oauth_redirect?code=x&state=${forged}`, {
      headers: { cookie: `slack-app-oauth-state=${forged}` },
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain('it was not issued by this bot');
    const otherBrowser = await fetch(`${base}/slack/oauth_redirect?code=x&state=${cookie.split('=')[1]}`);
    expect(otherBrowser.status).toBe(400);
    expect(await rows(h.database, 'select id from slack_installations')).toEqual([]);
  });
});

describe('an event whose installation could not be read (OAuth)', () => {
  let h: Harness;
  const refusal = { next: false };
  beforeEach(async () => {
    h = await startHarness({
      env: oauthEnv(),
      overrides: { stores: installationsRefusedOnce(refusal) },
    });
    enableInstalls(h.slack, new URL(h.url).origin);
  });
  afterEach(async () => h.close());

  it("is answered with an error, and Slack's retry of it (the same event id) is taken, not ignored as a replay", async () => {
    await installWorkspace(h.slack, new URL(h.url).origin, { teamId: 'T1', teamName: 'Acme' });
    h.model.enqueue(reply.text('Hello from T1.'));
    const envelope = eventEnvelope(
      appMentionEvent({ user: 'UT1', channel: 'CT1', text: '<@UBOT> hello', ts: nextTs(), team: 'T1' }),
      { teamId: 'T1' },
    );
    refusal.next = true;
    expect((await postEvent(h.url, SECRET, envelope)).status).toBeGreaterThanOrEqual(400);
    expect(h.model.requests).toHaveLength(0);
    const retry = await postEvent(h.url, SECRET, envelope, {
      'x-slack-retry-num': '1',
      'x-slack-retry-reason': 'http_error',
    });
    expect(retry.status).toBe(200);
    await h.waitForText((text) => text === 'Hello from T1.');
    // A replay of what was taken is still ignored.
    expect((await postEvent(h.url, SECRET, envelope)).status).toBe(200);
    await h.bot.conversations.idle();
    expect(h.model.requests).toHaveLength(1);
  });
});
