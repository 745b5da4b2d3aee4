import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { installWorkspace, oauthEnv } from '../support/oauth-installs.js';
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
import { enableOAuth } from './oauth-support.js';

/** Where a person acts from: their workspace, and its organisation when it is one of E1's. */
interface From {
  userId: string;
  teamId: string;
  enterpriseId?: string;
}

/**
 * An org-wide install by WORGADMIN (Enterprise Grid organisation E1, workspaces T1 and T2): in a workspace of the
 * organisation with no install of its own, the person who installed the app for the whole organisation is its
 * admin until the workspace lists its own admins; a workspace installed on its own outside the organisation
 * keeps its own installer, whatever organisation a payload names.
 */
describe("an org-wide install: the organisation's installer is each of its workspaces' admin", () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ env: oauthEnv() });
    const base = enableOAuth(h);
    await installWorkspace(h.slack, base, { enterpriseId: 'E1', userId: 'WORGADMIN', teams: ['T1', 'T2'] });
    await installWorkspace(h.slack, base, { teamId: 'T9', userId: 'UT9ADMIN' });
  });
  afterEach(async () => h.close());

  /** `/approvals text`, as Slack signs it for the person's workspace (and organisation); resolves with the answer. */
  const approvals = async (from: From, text: string): Promise<string> => {
    const id = randomUUID();
    const fields = {
      ...slashCommandBody({
        command: '/approvals',
        text,
        userId: from.userId,
        teamId: from.teamId,
        channelId: `C${from.teamId}`,
        responseUrl: h.slack.responseUrl(id),
      }),
      ...(from.enterpriseId ? { enterprise_id: from.enterpriseId, is_enterprise_install: 'true' } : {}),
    };
    expect((await postSlashCommand(h.url, SECRET, fields)).status).toBe(200);
    const answer = await h.slack.waitForCall('response_url', (c) => c.params.responseUrlId === id);
    return String(answer.params.text);
  };

  /** A request to run delete_note (admins only) in T2, asked by W2ASKER. */
  const deleteRequestInT2 = async () => {
    h.model.enqueue(reply.toolCalls([{ name: 'delete_note', arguments: { id: 1 } }]));
    const mention = appMentionEvent({
      user: 'W2ASKER',
      channel: 'CT2',
      text: '<@UBOT> delete note 1',
      ts: nextTs(),
      team: 'T2',
    });
    const envelope = eventEnvelope(mention, { teamId: 'T2', enterpriseId: 'E1', enterpriseInstall: true });
    expect((await postEvent(h.url, SECRET, envelope)).status).toBe(200);
    return h.slack.waitForCall(
      'chat.postMessage',
      (c) => c.params.channel === 'CT2' && Boolean(c.params.blocks),
    );
  };

  const approve = async (card: Awaited<ReturnType<typeof deleteRequestInT2>>, from: From) => {
    const payload = blockActionsPayload({
      ...from,
      enterpriseInstall: from.enterpriseId !== undefined,
      channelId: 'CT2',
      messageTs: cardTs(card),
      threadTs: String(card.params.thread_ts),
      actionId: 'approval:approve',
      value: approvalIdOf(card),
    });
    expect((await postInteraction(h.url, SECRET, payload)).status).toBe(200);
  };

  const statusOf = async (id: string) =>
    (await rows(h.database, `select status, decided_by from approvals where id = '${id}'`))[0];

  const inT2 = (userId: string): From => ({ userId, teamId: 'T2', enterpriseId: 'E1' });

  it('decides an admin-only tool in T2, where a person of T2 who is no admin cannot', async () => {
    const card = await deleteRequestInT2();
    const id = approvalIdOf(card);
    await approve(card, inT2('W2PERSON'));
    await waitUntil(
      async () =>
        (
          await rows(
            h.database,
            `select 1 from audit_events where kind = 'approval.refused' and actor = 'W2PERSON'`,
          )
        ).length > 0,
    );
    expect(await statusOf(id)).toEqual({ status: 'pending', decided_by: null });

    // Their App Home in T2, published with the organisation's token, offers them the request to decide.
    const opened = eventEnvelope(
      { type: 'app_home_opened', user: 'WORGADMIN', channel: 'D0HOME', tab: 'home', event_ts: nextTs() },
      { teamId: 'T2', enterpriseId: 'E1', enterpriseInstall: true },
    );
    expect((await postEvent(h.url, SECRET, opened)).status).toBe(200);
    const home = await h.slack.waitForCall('views.publish', (c) => c.params.user_id === 'WORGADMIN');
    expect(h.slack.oauth.teamOf(home.token)).toBe('E1');
    expect(JSON.stringify(home.params.view)).toContain(`"value":"${id}"`);

    h.model.enqueue(reply.text('Deleted.'));
    await approve(card, inT2('WORGADMIN'));
    await h.waitForText((text) => text === 'Deleted.');
    expect(await statusOf(id)).toEqual({ status: 'executed', decided_by: 'WORGADMIN' });
  });

  it('adds admins to T2 with /approvals admins add, and stays one of them until removed', async () => {
    // A person of T2 who is no admin changes nothing.
    expect(await approvals(inT2('W2PERSON'), 'admins add <@W2PERSON>')).toContain('for admins only');
    expect(await approvals(inT2('WORGADMIN'), 'admins')).toBe('*Admins of this workspace:* <@WORGADMIN>');

    expect(await approvals(inT2('WORGADMIN'), 'admins add <@W2ANN>')).toBe(
      'Added <@W2ANN>. *Admins of this workspace:* <@WORGADMIN>, <@W2ANN>',
    );
    expect(
      await rows(
        h.database,
        `select user_id, added_by from team_admins where team_id = 'T2' order by added_at`,
      ),
    ).toEqual([
      { user_id: 'WORGADMIN', added_by: 'install' },
      { user_id: 'W2ANN', added_by: 'WORGADMIN' },
    ]);
    // Once listed, each of them acts as an admin of T2; T1 still has only the organisation's installer.
    expect(await approvals(inT2('W2ANN'), 'admins')).toBe(
      '*Admins of this workspace:* <@WORGADMIN>, <@W2ANN>',
    );
    expect(await approvals({ userId: 'W2ANN', teamId: 'T1', enterpriseId: 'E1' }, 'admins')).toContain(
      'for admins only',
    );

    expect(await approvals(inT2('W2ANN'), 'admins remove <@WORGADMIN>')).toBe(
      'Removed <@WORGADMIN>. *Admins of this workspace:* <@W2ANN>',
    );
    expect(await approvals(inT2('WORGADMIN'), 'admins add <@W2BOB>')).toContain('for admins only');
    const changes = await rows(
      h.database,
      `select kind, actor, team_id, enterprise_id from audit_events where kind like 'team.%' order by seq`,
    );
    expect(changes).toEqual([
      { kind: 'team.admin_added', actor: 'WORGADMIN', team_id: 'T2', enterprise_id: 'E1' },
      { kind: 'team.admin_removed', actor: 'W2ANN', team_id: 'T2', enterprise_id: 'E1' },
    ]);
  });

  it('is nobody in a workspace installed on its own outside the organisation, whatever its payload names', async () => {
    for (const from of [
      { userId: 'WORGADMIN', teamId: 'T9' },
      { userId: 'WORGADMIN', teamId: 'T9', enterpriseId: 'E1' },
    ])
      expect(await approvals(from, 'admins add <@WORGADMIN>')).toContain('for admins only');
    expect(await approvals({ userId: 'UT9ADMIN', teamId: 'T9' }, 'admins')).toBe(
      '*Admins of this workspace:* <@UT9ADMIN>',
    );
    expect(await rows(h.database, 'select team_id from team_admins')).toEqual([]);
  });
});
