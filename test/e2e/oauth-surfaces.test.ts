import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import type { SlackCall } from '../support/fake-slack.js';
import { slackReply } from '../support/fake-slack.js';
import { installWorkspace, oauthEnv } from '../support/oauth-installs.js';
import { blockActionsPayload } from '../support/slack-payloads.js';
import { nextTs, postInteraction } from '../support/slack-requests.js';
import { approvalIdOf, cardTs, type Harness, SECRET } from './harness.js';
import { enableOAuth, mentionIn, sendTeamEvent, tokenTeams } from './oauth-support.js';
import { FakeClock, HOUR, startPolicyHarness } from './policy-support.js';

/** Calls that carry no bot token of a workspace: the installs themselves. */
const INSTALL_METHODS = new Set(['oauth.v2.authorize', 'oauth.v2.access']);

describe('installed into several workspaces, every surface speaks with its workspace token', () => {
  let h: Harness;
  let dir: string;
  const clock = new FakeClock();
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'oauth-surfaces-'));
    const { privateKey } = generateKeyPairSync('ed25519');
    writeFileSync(join(dir, 'key.pem'), privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    h = await startPolicyHarness(
      {
        tools: {
          create_note: { approvers: ['S0GROUP'], remindAfter: '1h' },
          post_message: { approvers: ['S0GROUP'] },
        },
      },
      {
        env: {
          ...oauthEnv(),
          AUDIT_INCLUDE_WORKSPACE_ADMINS: 'true',
          AUDIT_SIGNING_KEY: join(dir, 'key.pem'),
          AUDIT_CHECKPOINT_CHANNEL: 'T2:CT2CHECK',
        },
        overrides: { clock, checkpointIntervalMs: 100 },
      },
    );
    const base = enableOAuth(h);
    await installWorkspace(h.slack, base, { teamId: 'T1' });
    await installWorkspace(h.slack, base, { teamId: 'T2' });
  });
  afterEach(async () => {
    await h.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const click = (card: SlackCall, userId: string) =>
    postInteraction(
      h.url,
      SECRET,
      blockActionsPayload({
        userId,
        teamId: 'T2',
        channelId: 'CT2',
        messageTs: cardTs(card),
        threadTs: String(card.params.thread_ts),
        actionId: 'approval:approve',
        value: approvalIdOf(card),
      }),
    );

  it('App Home, audit rights, the Messages tab, group and channel lookups, reminders, post_message and checkpoints', async () => {
    const start = h.slack.calls.length;
    // App Home in each workspace, and the audit rights of its viewer, asked of that workspace.
    for (const team of ['T1', 'T2'])
      await sendTeamEvent(h, team, {
        type: 'app_home_opened',
        user: `U${team}`,
        channel: `D${team}`,
        tab: 'home',
      });
    const homes = await h.slack.waitForCall(
      'views.publish',
      () => h.slack.callsTo('views.publish').length === 2,
    );
    expect(homes).toBeDefined();
    const published = h.slack.callsTo('views.publish');
    expect(published.map((call) => [call.params.user_id, h.slack.oauth.teamOf(call.token)]).sort()).toEqual([
      ['UT1', 'T1'],
      ['UT2', 'T2'],
    ]);
    expect(
      h.slack
        .callsTo('users.info')
        .map((call) => [call.params.user, h.slack.oauth.teamOf(call.token)])
        .sort(),
    ).toEqual([
      ['UT1', 'T1'],
      ['UT2', 'T2'],
    ]);
    const afterHomes = h.slack.calls.length;

    // The Messages tab of T2: its suggested prompts and greeting.
    await sendTeamEvent(h, 'T2', {
      type: 'app_home_opened',
      user: 'UT2',
      channel: 'DT2',
      tab: 'messages',
      event_ts: nextTs(),
    });
    await h.slack.waitForCall('assistant.threads.setSuggestedPrompts');
    await h.slack.waitForCall('chat.postMessage', (call) => call.params.channel === 'DT2');

    // A request in T2: who may stop it is asked of T2's channel, its reminder goes to T2's thread.
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'two' } }]));
    const asked = await mentionIn(h, 'T2', 'note two');
    const card = await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.params.channel === 'CT2' && Boolean(call.params.blocks),
    );
    await sendTeamEvent(h, 'T2', {
      type: 'agent_session_stopped',
      channel: 'CT2',
      thread_ts: asked,
      user: 'UT2STRANGER',
      streaming_message_ts: [],
      event_ts: nextTs(),
    });
    await h.slack.waitForCall('conversations.members', (call) => call.params.channel === 'CT2');
    clock.advance(HOUR);
    await h.bot.checkDeadlines();
    await h.slack.waitForCall('chat.postMessage', (call) => String(call.params.text).includes('Reminder'));

    // Group members decide, looked up in T2; post_message posts in T2.
    h.slack.setResponse('usergroups.users.list', () => slackReply.ok({ users: ['UT2B'] }));
    h.model.enqueue(
      reply.toolCalls([{ name: 'post_message', arguments: { channel: 'CT2NEWS', text: 'hello' } }]),
    );
    expect((await click(card, 'UT2B')).status).toBe(200);
    const second = await h.slack.waitForCall(
      'chat.postMessage',
      (call) => call.params.channel === 'CT2' && Boolean(call.params.blocks) && call !== card,
    );
    h.model.enqueue(reply.text('Posted in T2.'));
    expect((await click(second, 'UT2B')).status).toBe(200);
    await h.slack.waitForCall('chat.postMessage', (call) => call.params.channel === 'CT2NEWS');
    await h.waitForText((text) => text === 'Posted in T2.');

    // The checkpoint an hour brought is posted to the channel named with its workspace.
    await h.slack.waitForCall('chat.postMessage', (call) => call.params.channel === 'CT2CHECK');

    const t2 = h.slack.calls.slice(afterHomes).filter((call) => !INSTALL_METHODS.has(call.method));
    const methods = new Set(t2.map((call) => call.method));
    for (const method of [
      'assistant.threads.setSuggestedPrompts',
      'conversations.members',
      'usergroups.users.list',
      'chat.postMessage',
    ])
      expect(methods).toContain(method);
    expect(tokenTeams(h, t2).filter(([, team]) => team !== 'T2')).toEqual([]);
    expect(
      h.slack.calls.slice(start).filter((call) => JSON.stringify(call.reply).includes('invalid_auth')),
    ).toEqual([]);
  });
});
