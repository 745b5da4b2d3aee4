import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { installWorkspace, oauthEnv } from '../support/oauth-installs.js';
import { eventEnvelope, postEvent } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { type Harness, SECRET } from './harness.js';
import { enableOAuth, mentionIn } from './oauth-support.js';
import { FakeClock, HOUR, query, startPolicyHarness } from './policy-support.js';

const REMOVED_OUTPUT =
  'Tool execution was not approved: the request expired with no decision because the app was removed from this Slack workspace, so nobody could decide it.';

describe('a workspace removes the app while its request waits', () => {
  let h: Harness;
  let base: string;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startPolicyHarness(
      { tools: { create_note: { approvers: ['conversation'], remindAfter: '1h', expiresAfter: '24h' } } },
      { env: oauthEnv(), overrides: { clock } },
    );
    base = enableOAuth(h);
    await installWorkspace(h.slack, base, { teamId: 'T1' });
    await installWorkspace(h.slack, base, { teamId: 'T2' });
  });
  afterEach(async () => h.close());

  const cardIn = (teamId: string, after = 0) =>
    h.slack.waitForCall(
      'chat.postMessage',
      (call) =>
        call.params.channel === `C${teamId}` &&
        Boolean(call.params.blocks) &&
        h.slack.calls.indexOf(call) >= after,
    );

  it('its requests expire saying so, its timers stop, nothing is sent with its revoked token; a reinstall starts clean', async () => {
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'two' } }]));
    await mentionIn(h, 'T2', 'note two');
    await cardIn('T2');
    const approvalId = String((await query(h.database, 'select id from approvals'))[0]?.id);
    // The run has paused (its session shows it) before Slack takes the token back.
    await h.slack.waitForCall(
      'agents.sessions.setStatus',
      (call) => call.params.channel_id === 'CT2' && call.params.status === 'suspended',
    );

    h.slack.oauth.revoke('T2');
    const removedAt = h.slack.calls.length;
    h.model.enqueue(reply.text('The app was removed; nothing was noted.'));
    const uninstall = eventEnvelope({ type: 'app_uninstalled' }, { teamId: 'T2' });
    expect((await postEvent(h.url, SECRET, uninstall)).status).toBe(200);

    // The request expired, saying why; the model read that the app was removed, never a refusal.
    const [expired] = await waitUntil(async () => {
      const found = await query(
        h.database,
        `select status, reason from approvals where id = '${approvalId}'`,
      );
      return found[0]?.status === 'expired' ? found : undefined;
    });
    expect(expired?.reason).toBe('app_removed');
    const audited = await query(
      h.database,
      "select payload from audit_events where kind = 'approval.expired'",
    );
    expect(audited).toHaveLength(1);
    expect(String(audited[0]?.payload)).toContain('"removal":"app_uninstalled"');
    await h.model.waitForRequests(2);
    const toolOutputs = JSON.stringify(h.model.requests[1]?.messages.filter((m) => m.role === 'tool'));
    expect(toolOutputs).toContain(REMOVED_OUTPUT);
    expect(toolOutputs).not.toContain('Rejected by');

    // Its reminder and its expiry never come: the deadlines pass with nothing to act on.
    clock.advance(25 * HOUR);
    await h.bot.checkDeadlines();
    expect(
      await query(
        h.database,
        "select kind from audit_events where kind in ('approval.reminded', 'approval.expired')",
      ),
    ).toHaveLength(1);
    // No call of T2's was made since: none with its revoked token, none refused by Slack.
    await waitUntil(() => h.logs.some((line) => line.includes('slack call without a token')));
    const since = h.slack.calls.slice(removedAt);
    expect(since.filter((call) => h.slack.oauth.teamOf(call.token) === 'T2')).toEqual([]);
    expect(
      h.slack.calls.filter((call) => String(JSON.stringify(call.reply)).includes('token_revoked')),
    ).toEqual([]);

    // Installed again: a new conversation works with the new token, and the history is all there.
    await installWorkspace(h.slack, base, { teamId: 'T2' });
    const reinstalled = h.slack.calls.length;
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'again' } }]));
    await mentionIn(h, 'T2', 'note again');
    const card = await cardIn('T2', reinstalled);
    expect(h.slack.oauth.teamOf(card.token)).toBe('T2');
    expect(JSON.stringify(card.reply)).toContain('"ok":true');
    const kinds = (await query(h.database, 'select kind from audit_events order by seq')).map((r) => r.kind);
    expect(kinds.filter((kind) => String(kind).startsWith('installation.'))).toEqual([
      'installation.added',
      'installation.added',
      'installation.removed',
      'installation.added',
    ]);
    expect(kinds).toContain('approval.expired');
  });
});
