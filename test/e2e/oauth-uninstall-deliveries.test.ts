import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { slackReply } from '../support/fake-slack.js';
import { installWorkspace, oauthEnv } from '../support/oauth-installs.js';
import { eventEnvelope, postEvent } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { type Harness, SECRET } from './harness.js';
import { enableOAuth, mentionIn } from './oauth-support.js';
import { query, startPolicyHarness } from './policy-support.js';

describe('a workspace removes the app while deliveries are owed to it', () => {
  let h: Harness;
  let base: string;
  beforeEach(async () => {
    h = await startPolicyHarness(
      { tools: { create_note: { approvers: ['conversation'] } } },
      { env: { ...oauthEnv(), OPENAI_STREAM: 'false' }, overrides: { deliveryRetryMs: 100 } },
    );
    base = enableOAuth(h);
    await installWorkspace(h.slack, base, { teamId: 'T1' });
    await installWorkspace(h.slack, base, { teamId: 'T2' });
  });
  afterEach(async () => h.close());

  const owed = async () =>
    (await query(h.database, 'select kind from deliveries order by kind')).map((row) => row.kind);
  const dropped = () =>
    query(
      h.database,
      "select team_id, approval_id, payload from audit_events where kind = 'delivery.dropped' order by seq",
    );

  it('drops what is owed there, audited, never calls Slack for it, and a reinstall sends nothing old', async () => {
    // Slack refuses T2's posts for a while: a card and a reply are owed.
    let refusing = true;
    h.slack.setResponse('chat.postMessage', (params) =>
      refusing && params.channel === 'CT2'
        ? slackReply.error('internal_error')
        : h.slack.defaultReply('chat.postMessage', params),
    );
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'two' } }]));
    await mentionIn(h, 'T2', 'note two');
    await waitUntil(async () => (await owed()).includes('card'));
    h.model.enqueue(reply.text('Hello from T2.'));
    await mentionIn(h, 'T2', 'hello');
    await waitUntil(async () => (await owed()).includes('reply'));
    const retried = h.slack.callsTo('chat.postMessage').length;
    // The outbox keeps trying while the workspace has the app.
    await h.slack.waitForCall(
      'chat.postMessage',
      () => h.slack.callsTo('chat.postMessage').length > retried + 2,
    );

    // Slack revokes the token, then tells the bot: a retry in between meets the revoked token, which the bot
    // cannot know yet. What is promised is nothing after the bot has handled the removal.
    h.slack.oauth.revoke('T2');
    h.model.enqueue(reply.text('The app was removed; nothing was noted.'));
    const uninstall = eventEnvelope({ type: 'app_uninstalled' }, { teamId: 'T2' });
    expect((await postEvent(h.url, SECRET, uninstall)).status).toBe(200);

    // The card and the reply are dropped at once; the reply of the run the removal resumed is dropped at its
    // first try: nothing is owed any more, and each drop is audited with why.
    await waitUntil(async () => (await owed()).length === 0 && (await dropped()).length === 3);
    const removedAt = h.slack.calls.length;
    refusing = false;
    const events = await dropped();
    expect(events.map((e) => e.team_id)).toEqual(['T2', 'T2', 'T2']);
    expect(events.map((e) => JSON.parse(String(e.payload)))).toEqual([
      { kind: 'card', attempts: expect.any(Number), reason: 'app_removed' },
      { kind: 'reply', attempts: expect.any(Number), reason: 'app_removed' },
      { kind: 'reply', attempts: 0, reason: 'app_removed' },
    ]);
    expect(events[0]?.approval_id).toEqual(expect.stringMatching(/^apr_/));
    // What was owed is dropped with the uninstall itself, before its request expires.
    const order = (await query(h.database, 'select kind from audit_events order by seq')).map((r) => r.kind);
    expect(order.slice(order.indexOf('installation.removed'), order.indexOf('approval.expired'))).toEqual([
      'installation.removed',
      'delivery.dropped',
      'delivery.dropped',
    ]);
    await waitUntil(() => h.logs.some((line) => line.includes('a delivery was dropped')));
    // A T1 delivery owed and retried proves the outbox ran since the removal; none of its tries was for T2.
    refusing = true;
    h.slack.setResponse('chat.postMessage', (params) =>
      refusing && params.channel === 'CT1'
        ? slackReply.error('internal_error')
        : h.slack.defaultReply('chat.postMessage', params),
    );
    h.model.enqueue(reply.text('Owed to T1.'));
    await mentionIn(h, 'T1', 'are you there?');
    await waitUntil(async () => (await owed()).includes('reply'));
    refusing = false;
    await h.waitForText((text) => text === 'Owed to T1.');
    await waitUntil(async () => (await owed()).length === 0);
    const sinceRemoval = h.slack.calls.slice(removedAt);
    expect(sinceRemoval.filter((call) => h.slack.oauth.teamOf(call.token) === 'T2')).toEqual([]);
    expect(sinceRemoval.filter((call) => JSON.stringify(call.reply).includes('token_revoked'))).toEqual([]);

    // Installed again: a new conversation is answered, and nothing owed before the removal comes back.
    await installWorkspace(h.slack, base, { teamId: 'T2' });
    const reinstalledAt = h.slack.calls.length;
    h.model.enqueue(reply.text('Back again.'));
    await mentionIn(h, 'T2', 'are you there?');
    await h.waitForText((text) => text === 'Back again.');
    // A T1 delivery owed and retried after the reinstall proves the outbox ran since.
    refusing = true;
    h.slack.setResponse('chat.postMessage', (params) =>
      refusing && params.channel === 'CT1'
        ? slackReply.error('internal_error')
        : h.slack.defaultReply('chat.postMessage', params),
    );
    h.model.enqueue(reply.text('Hello from T1.'));
    await mentionIn(h, 'T1', 'hello');
    await waitUntil(async () => (await owed()).includes('reply'));
    refusing = false;
    await h.waitForText((text) => text === 'Hello from T1.');
    const texts = h.slack.calls
      .slice(reinstalledAt)
      .filter((call) => call.method === 'chat.postMessage')
      .map((call) => String(call.params.text));
    expect(texts).toContain('Back again.');
    expect(texts.filter((text) => text === 'Hello from T2.')).toEqual([]);
    // Slack has the post; the bot clears what it owed once Slack's answer is back.
    await waitUntil(async () => (await owed()).length === 0);
  });
});
