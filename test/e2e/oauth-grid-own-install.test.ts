import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { installWorkspace, oauthEnv } from '../support/oauth-installs.js';
import { eventEnvelope, postEvent } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { type Harness, SECRET } from './harness.js';
import { enableOAuth, mentionInOrganisation, tokenTeams } from './oauth-support.js';
import { FakeClock, HOUR, query, startPolicyHarness } from './policy-support.js';

/**
 * An Enterprise Grid organisation with an org-wide install, one of whose workspaces (T4) also has an install of
 * its own: a workspace is served by its own install first, then by its organisation's, so removing one of the
 * two leaves T4 with the app, and nothing there may end as if it had been removed.
 */
describe('a workspace of an organisation with an install of its own', () => {
  let h: Harness;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startPolicyHarness(
      { tools: { create_note: { approvers: ['conversation'], remindAfter: '1h' } } },
      { env: oauthEnv(), overrides: { clock } },
    );
    const base = enableOAuth(h);
    await installWorkspace(h.slack, base, { enterpriseId: 'E1', userId: 'WADMIN' });
    await installWorkspace(h.slack, base, { teamId: 'T4', enterpriseId: 'E1', userId: 'WT4' });
  });
  afterEach(async () => h.close());

  /** A request in `teamId`'s workspace of the organisation; resolves once its card is posted. */
  const requestIn = async (teamId: string, orgWide: boolean) => {
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: teamId } }]));
    await mentionInOrganisation(h, teamId, orgWide);
    await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.params.channel === `C${teamId}` && Boolean(call.params.blocks),
    );
  };
  const statuses = () => query(h.database, 'select team_id, status, reason from approvals order by team_id');

  it("the organisation removes the app: its workspaces' requests expire, not those of the workspace that keeps its own install", async () => {
    await requestIn('T3', true);
    await requestIn('T4', false);
    h.slack.oauth.revoke('E1');
    h.model.enqueue(reply.text('Removed.'));
    const uninstall = eventEnvelope(
      { type: 'app_uninstalled' },
      { teamId: 'T3', enterpriseId: 'E1', enterpriseInstall: true },
    );
    expect((await postEvent(h.url, SECRET, uninstall)).status).toBe(200);
    await waitUntil(async () => (await statuses())[0]?.status === 'expired');
    expect(await statuses()).toEqual([
      { team_id: 'T3', status: 'expired', reason: 'app_removed' },
      { team_id: 'T4', status: 'pending', reason: null },
    ]);
    // T4's request still waits with its timers, and its reminder goes with T4's own token.
    const before = h.slack.calls.length;
    clock.advance(HOUR);
    await h.bot.checkDeadlines();
    const reminder = await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.params.channel === 'CT4' && String(call.params.text).includes('Reminder'),
    );
    expect(tokenTeams(h, [reminder])).toEqual([['chat.postMessage', 'T4']]);
    expect(
      h.slack.calls.slice(before).filter((call) => call.params.channel === 'CT3' && call.params.text),
    ).toEqual([]);
  });

  it('the workspace removes its own install: the organisation still serves it, so its request waits on', async () => {
    await requestIn('T4', false);
    h.slack.oauth.revoke('T4');
    const uninstall = eventEnvelope({ type: 'app_uninstalled' }, { teamId: 'T4', enterpriseId: 'E1' });
    expect((await postEvent(h.url, SECRET, uninstall)).status).toBe(200);
    await waitUntil(() =>
      h.logs.some((line) => line.includes("the organisation's install still serves the workspace")),
    );
    expect(await statuses()).toEqual([{ team_id: 'T4', status: 'pending', reason: null }]);
    expect(
      await query(h.database, "select count(*) as n from audit_events where kind = 'installation.removed'"),
    ).toEqual([{ n: 1 }]);
    // What follows there now goes with the organisation's token.
    clock.advance(HOUR);
    await h.bot.checkDeadlines();
    const reminder = await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.params.channel === 'CT4' && String(call.params.text).includes('Reminder'),
    );
    expect(tokenTeams(h, [reminder])).toEqual([['chat.postMessage', 'E1']]);
  });
});
