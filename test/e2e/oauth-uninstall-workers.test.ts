import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { BotProcess } from '../support/bot-process.js';
import { reply } from '../support/fake-openai.js';
import { type SlackCall, slackReply } from '../support/fake-slack.js';
import { enableInstalls, installWorkspace, oauthEnv } from '../support/oauth-installs.js';
import { eventEnvelope, postEvent } from '../support/slack-requests.js';
import { waitUntil } from '../support/wait.js';
import { isApprovalCard, SECRET } from './harness.js';
import { mentionIn } from './oauth-support.js';
import { writePolicy } from './policy-support.js';
import { type Latch, latch, type ProcessFixture, startProcessFixture } from './process-fixture.js';

const REMOVED_OUTPUT =
  'Tool execution was not approved: the request expired with no decision because the app was removed from this Slack workspace, so nobody could decide it.';

/**
 * What `npm start` runs, with its default worker thread: the intake thread takes the uninstall event while the
 * runs, their deliveries and the deadlines of two workspaces are driven on the worker.
 */
describe('a workspace removes the app while its work runs on a worker thread', () => {
  let f: ProcessFixture;
  let bot: BotProcess;
  let policyFile: string;
  let held: Latch;
  beforeEach(async () => {
    f = await startProcessFixture();
    held = latch();
    policyFile = writePolicy({ tools: { create_note: { approvers: ['admins'], remindAfter: '4s' } } });
    bot = await f.start({ ...oauthEnv(), WORKERS: '1', APPROVAL_POLICY_FILE: policyFile });
    enableInstalls(f.slack, bot.url);
    await installWorkspace(f.slack, bot.url, { teamId: 'T1' });
    await installWorkspace(f.slack, bot.url, { teamId: 'T2' });
  });
  afterEach(async () => {
    held.open();
    await f.close();
    rmSync(dirname(policyFile), { recursive: true, force: true });
  });

  const events = () => `${bot.url}/slack/events`;
  const mention = (teamId: string, text: string) => mentionIn({ url: events() }, teamId, text);
  const teamOf = (call: SlackCall) => f.slack.oauth.teamOf(call.token);
  const owed = async () => (await f.query('select kind from deliveries order by kind')).map((r) => r.kind);
  const audited = (kind: string) =>
    f.query('select team_id, approval_id, payload from audit_events where kind = ? order by seq', kind);

  it('expires its request telling the model why, drops what was owed or under way there, sends nothing with its token; the other workspace goes on', async () => {
    // T2's card is refused while the app is there (it is owed), and T2's answer is under way when the app is
    // removed: Slack holds it, then fails it (HTTP 500), and the client would try it again.
    const isHello = (c: SlackCall) => c.params.channel === 'CT2' && c.params.text === 'Hello from T2.';
    f.slack.setResponse('chat.postMessage', async (params, call) => {
      if (params.channel !== 'CT2') return f.slack.defaultReply('chat.postMessage', params);
      if (call === f.slack.callsTo('chat.postMessage').find(isHello)) {
        await held.wait;
        return slackReply.http(500);
      }
      if (params.blocks) return slackReply.error('internal_error');
      return f.slack.defaultReply('chat.postMessage', params);
    });
    f.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'two' } }]));
    const asked = await mention('T2', 'note two');
    await waitUntil(async () => (await owed()).includes('card'), { timeoutMs: 15_000 });
    await f.slack.waitForCall(
      'agents.sessions.setStatus',
      (call) => call.params.thread_ts === asked && call.params.status === 'suspended',
      15_000,
    );
    const [request] = await f.query("select id from approvals where team_id = 'T2'");
    // Last, so that Slack holds it well inside the call's time limit.
    f.model.enqueue(reply.text('Hello from T2.'));
    await mention('T2', 'hello');
    await f.slack.waitForCall('chat.postMessage', isHello, 15_000);

    // Slack takes the token back, then tells the bot.
    f.slack.oauth.revoke('T2');
    const removedAt = f.slack.calls.length;
    f.model.enqueue(reply.text('The app was removed; nothing was noted.'));
    const uninstall = eventEnvelope({ type: 'app_uninstalled' }, { teamId: 'T2' });
    expect((await postEvent(events(), SECRET, uninstall)).status).toBe(200);

    // The request expired saying why, and the run resumed on the worker read that the app was removed.
    await waitUntil(async () => (await audited('approval.expired')).length === 1, { timeoutMs: 15_000 });
    expect(await f.query('select status, reason from approvals where id = ?', request?.id)).toEqual([
      { status: 'expired', reason: 'app_removed' },
    ]);
    const told = await f.model.waitForRequests(3, 15_000);
    const toolOutputs = JSON.stringify(told[2]?.messages.filter((m) => m.role === 'tool'));
    expect(toolOutputs).toContain(REMOVED_OUTPUT);
    expect(toolOutputs).not.toContain('Rejected by');

    // The answer under way fails now: it is not sent again with the token Slack took back, but dropped.
    held.open();
    await waitUntil(
      async () => (await owed()).length === 0 && (await audited('delivery.dropped')).length === 3,
      {
        timeoutMs: 15_000,
      },
    );
    const dropped = await audited('delivery.dropped');
    expect(dropped.map((event) => event.team_id)).toEqual(['T2', 'T2', 'T2']);
    expect(dropped.map((event) => JSON.parse(String(event.payload))).sort(byKind)).toEqual([
      { kind: 'card', attempts: 1, reason: 'app_removed' },
      { kind: 'reply', attempts: 0, reason: 'app_removed' },
      { kind: 'reply', attempts: 0, reason: 'app_removed' },
    ]);

    // T1 goes on: a request made after T2's is reminded (so T2's reminder was due too, and never came),
    // decided and answered, every call with T1's token.
    f.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'one' } }]),
      reply.text('Noted in T1.'),
    );
    await mention('T1', 'note one');
    const card = await f.slack.waitForCall(
      'chat.postMessage',
      (call) => call.params.channel === 'CT1' && isApprovalCard(call),
      15_000,
    );
    await waitUntil(async () => (await audited('approval.reminded')).length > 0, { timeoutMs: 15_000 });
    expect((await audited('approval.reminded')).map((event) => event.team_id)).toEqual(['T1']);
    // The installer is T1's admin; the click comes from T1.
    expect((await f.click(bot, card, 'approve', 'UINSTALLER')).status).toBe(200);
    await f.waitForText((text) => text === 'Noted in T1.');

    // Nothing went to T2 since it was removed, and Slack never refused a token.
    const since = f.slack.calls.slice(removedAt);
    expect(since.filter((call) => teamOf(call) === 'T2').map((call) => call.method)).toEqual([]);
    expect(since.filter((call) => call.token !== undefined && teamOf(call) === 'T1').length).toBeGreaterThan(
      2,
    );
    expect(
      f.slack.calls.filter((call) => JSON.stringify(call.reply ?? {}).includes('token_revoked')),
    ).toEqual([]);
    expect(bot.output()).toContain('slack call without a token');
  });
});

const byKind = (a: { kind: string }, b: { kind: string }) => a.kind.localeCompare(b.kind);
