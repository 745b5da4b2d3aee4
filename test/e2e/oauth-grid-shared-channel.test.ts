import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import type { SlackCall } from '../support/fake-slack.js';
import { installWorkspace, oauthEnv } from '../support/oauth-installs.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import {
  appMentionEvent,
  eventEnvelope,
  nextTs,
  postEvent,
  postInteraction,
} from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { approvalIdOf, cardTs, type Harness, SECRET } from './harness.js';
import { enableOAuth, tokenTeams } from './oauth-support.js';
import { query, startPolicyHarness } from './policy-support.js';

/** A channel shared between T1 and T2, both workspaces of organisation E1. */
const SHARED = 'CSHARED';

describe('an org-wide install: a request in a shared channel, decided from another workspace of the organisation', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startPolicyHarness(
      { tools: { create_note: { approvers: ['conversation'] } } },
      { env: oauthEnv() },
    );
    const base = enableOAuth(h);
    await installWorkspace(h.slack, base, { enterpriseId: 'E1', userId: 'WADMIN', teams: ['T1', 'T2'] });
    // T3 is no workspace of E1: installed on its own.
    await installWorkspace(h.slack, base, { teamId: 'T3', userId: 'UT3ADMIN' });
    // Everyone is a member of the channel, so only the workspaces decide who reaches the request.
    h.slack.setMembers(SHARED, ['W2ASKER', 'W1APPROVER', 'UT3X']);
  });
  afterEach(async () => h.close());

  /** A click on the card, as Slack signs it for the clicker's workspace and organisation. */
  const click = (
    card: SlackCall,
    from: { userId: string; teamId: string; enterpriseId?: string; enterpriseInstall?: boolean },
  ) =>
    postInteraction(
      h.url,
      SECRET,
      blockActionsPayload({
        ...from,
        channelId: SHARED,
        messageTs: cardTs(card),
        threadTs: String(card.params.thread_ts),
        actionId: 'approval:approve',
        value: approvalIdOf(card),
      }),
    );

  it('is asked in T2 by a W… user, carded with the org token, refused to T3 and decided by a W… approver of T1', async () => {
    const installed = h.slack.calls.length;
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'shared' } }]));
    const asked = nextTs();
    const mention = appMentionEvent({
      user: 'W2ASKER',
      channel: SHARED,
      text: '<@UBOT> note it',
      ts: asked,
      team: 'T2',
    });
    const envelope = eventEnvelope(mention, { teamId: 'T2', enterpriseId: 'E1', enterpriseInstall: true });
    expect((await postEvent(h.url, SECRET, envelope)).status).toBe(200);
    const card = await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.params.channel === SHARED && Boolean(call.params.blocks),
    );
    expect(h.slack.oauth.teamOf(card.token)).toBe('E1');
    const approvalId = approvalIdOf(card);

    // T3, outside the organisation, with payloads naming the request, the shared channel and E1 or T1.
    const forged = [
      { userId: 'UT3X', teamId: 'T3' },
      { userId: 'UT3X', teamId: 'T3', enterpriseId: 'E1' },
      { userId: 'UT3X', teamId: 'T3', enterpriseId: 'E1', enterpriseInstall: true },
    ];
    for (const from of forged) expect((await click(card, from)).status).toBe(200);
    await waitUntil(async () => {
      const refused = await query(
        h.database,
        `select team_id from audit_events where kind = 'approval.refused' and actor = 'UT3X'`,
      );
      return refused.length === forged.length;
    });
    expect(await query(h.database, `select status from approvals where id = '${approvalId}'`)).toEqual([
      { status: 'pending' },
    ]);
    expect(
      await query(
        h.database,
        `select team_id, enterprise_id, payload from audit_events where actor = 'UT3X' order by seq`,
      ),
    ).toEqual(
      forged.map(() => ({
        team_id: 'T3',
        enterprise_id: null,
        payload: JSON.stringify({ vote: 'approve', reason: 'unknown_request', requested: approvalId }),
      })),
    );

    // A W… approver of T1, in the same organisation: decided by the request's own rule.
    h.model.enqueue(reply.text('Noted.'));
    expect(
      (await click(card, { userId: 'W1APPROVER', teamId: 'T1', enterpriseId: 'E1', enterpriseInstall: true }))
        .status,
    ).toBe(200);
    await h.waitForText((text) => text === 'Noted.');
    expect(
      await query(h.database, `select status, decided_by from approvals where id = '${approvalId}'`),
    ).toEqual([{ status: 'executed', decided_by: 'W1APPROVER' }]);

    // Every event of the request carries T2 and E1; the decision names the workspace it came from.
    const events = await query(
      h.database,
      `select kind, actor, team_id, enterprise_id from audit_events where run_id is not null order by seq`,
    );
    expect(events.length).toBeGreaterThan(4);
    expect(events.filter((e) => e.team_id !== 'T2' || e.enterprise_id !== 'E1')).toEqual([]);
    const [approved] = await query(
      h.database,
      `select payload from audit_events where kind = 'approval.approved' and approval_id = '${approvalId}'`,
    );
    expect(JSON.parse(String(approved?.payload))).toMatchObject({ fromTeam: 'T1' });

    // Every call of the organisation's conversation was made with the organisation's token; T3's person was
    // answered in T3, with T3's.
    const calls = h.slack.calls.slice(installed).filter((call) => call.params.channel === SHARED);
    const toT3 = (call: SlackCall) => call.params.user === 'UT3X';
    expect(calls.filter((call) => !toT3(call)).length).toBeGreaterThan(1);
    expect(
      tokenTeams(
        h,
        calls.filter((call) => !toT3(call)),
      ).filter(([, owner]) => owner !== 'E1'),
    ).toEqual([]);
    expect(tokenTeams(h, calls.filter(toT3))).toEqual(forged.map(() => ['chat.postEphemeral', 'T3']));
  });
});
