import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { installWorkspace, oauthEnv } from '../support/oauth-installs.js';
import { eventEnvelope, postEvent } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { type Harness, SECRET } from './harness.js';
import { enableOAuth, mentionInOrganisation, tokenTeams } from './oauth-support.js';
import { FakeClock, HOUR, query, startPolicyHarness } from './policy-support.js';

describe('an organisation-wide install (Enterprise Grid)', () => {
  let h: Harness;
  const clock = new FakeClock();
  beforeEach(async () => {
    h = await startPolicyHarness(
      { tools: { create_note: { approvers: ['conversation'], remindAfter: '1h' } } },
      { env: oauthEnv(), overrides: { clock } },
    );
    await installWorkspace(h.slack, enableOAuth(h), { enterpriseId: 'E1', userId: 'WADMIN' });
  });
  afterEach(async () => h.close());

  it("each workspace's conversation and request carry the organisation; what follows with no event uses its install", async () => {
    const installed = h.slack.calls.length;
    for (const team of ['T3', 'T4']) {
      h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: team } }]));
      await mentionInOrganisation(h, team);
      await h.slack.waitForCall(
        'chat.postMessage',
        (call) => call.params.channel === `C${team}` && Boolean(call.params.blocks),
      );
    }
    expect(
      await query(h.database, 'select team_id, enterprise_id from conversations order by team_id'),
    ).toEqual([
      { team_id: 'T3', enterprise_id: 'E1' },
      { team_id: 'T4', enterprise_id: 'E1' },
    ]);
    expect(await query(h.database, 'select team_id, enterprise_id from approvals order by team_id')).toEqual([
      { team_id: 'T3', enterprise_id: 'E1' },
      { team_id: 'T4', enterprise_id: 'E1' },
    ]);

    // Reminders come from a timer, with no event: the request's organisation finds the install.
    clock.advance(HOUR);
    await h.bot.checkDeadlines();
    for (const team of ['T3', 'T4'])
      await h.slack.waitForCall(
        'chat.postMessage',
        (call) => call.params.channel === `C${team}` && String(call.params.text).includes('Reminder'),
      );
    const calls = h.slack.calls.slice(installed);
    expect(tokenTeams(h, calls).filter(([, owner]) => owner !== 'E1')).toEqual([]);
    expect(h.logs.filter((line) => line.includes('slack call without a token'))).toEqual([]);

    // The organisation removes the app: the requests of each of its workspaces expire, saying so.
    h.slack.oauth.revoke('E1');
    const removedAt = h.slack.calls.length;
    h.model.enqueue(reply.text('Removed.'), reply.text('Removed.'));
    const uninstall = eventEnvelope(
      { type: 'app_uninstalled' },
      { teamId: 'T3', enterpriseId: 'E1', enterpriseInstall: true },
    );
    expect((await postEvent(h.url, SECRET, uninstall)).status).toBe(200);
    await waitUntil(async () => {
      const waiting = await query(h.database, "select id from approvals where status = 'pending'");
      return waiting.length === 0;
    });
    expect(await query(h.database, 'select team_id, reason from approvals order by team_id')).toEqual([
      { team_id: 'T3', reason: 'app_removed' },
      { team_id: 'T4', reason: 'app_removed' },
    ]);
    await h.model.waitForRequests(4);
    await waitUntil(() => h.logs.some((line) => line.includes('slack call without a token')));
    expect(tokenTeams(h, h.slack.calls.slice(removedAt)).filter(([, owner]) => owner === 'E1')).toEqual([]);
  });
});
