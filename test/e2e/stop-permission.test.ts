import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { slackReply } from '../support/fake-slack.js';
import { nextTs } from '../support/slack-requests.js';
import { DATABASE_KINDS } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { rows } from './db-rows.js';
import { gatedTool } from './gated-tool.js';
import { type Harness, startHarness } from './harness.js';

/** Slack's `agent_session_stopped`, signed: `user` clicked the stop button of the thread's session. */
function stopEvent(channel: string, threadTs: string, user: string) {
  return {
    type: 'agent_session_stopped',
    channel,
    thread_ts: threadTs,
    user,
    streaming_message_ts: [],
    event_ts: nextTs(),
  };
}

function refusals(h: Harness) {
  return rows(
    h.database,
    "select actor, team_id, conversation_id, payload from audit_events where kind = 'run.stop_refused' order by seq",
  );
}

/** Starts a run that calls the gated tool and answers `Looked it up.` once it returns. */
async function startBusyRun(h: Harness, gate: ReturnType<typeof gatedTool>, start: () => Promise<string>) {
  h.model.enqueue(reply.toolCalls([{ name: 'slow_lookup', arguments: {} }]), reply.text('Looked it up.'));
  const ts = await start();
  await gate.whenStarted();
  return ts;
}

/** The run ran to its end as if nobody had clicked stop. */
async function expectCompletedUnstopped(h: Harness) {
  await h.waitForText((text) => text === 'Looked it up.');
  await h.bot.conversations.idle();
  expect(await rows(h.database, 'select status, stop_requested_by from runs')).toEqual([
    { status: 'completed', stop_requested_by: null },
  ]);
  expect(h.texts().filter((text) => text.startsWith('Stopped by'))).toEqual([]);
  expect(await rows(h.database, "select seq from audit_events where kind = 'run.cancelled'")).toEqual([]);
}

describe('who may stop a thread’s work', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it.each(DATABASE_KINDS)(
    "a stop for Alice's DM signed with Bob's ID changes nothing (%s): the run completes, the refusal is audited",
    async (kind) => {
      const gate = gatedTool();
      h = await startHarness({ kind, overrides: { tools: (builtIn) => [...builtIn, gate.tool] } });
      const ts = await startBusyRun(h, gate, () =>
        h.message('look it up', { user: 'UALICE', channel: 'D0ALICE', channelType: 'im' }),
      );

      await h.sendEvent(stopEvent('D0ALICE', ts, 'UBOB'));
      const [refused] = await waitUntil(async () => {
        const found = await refusals(h);
        return found.length > 0 ? found : undefined;
      });
      expect(refused).toMatchObject({ actor: 'UBOB', team_id: 'T1' });
      expect(refused?.conversation_id).toBeTruthy();
      expect(JSON.parse(String(refused?.payload))).toMatchObject({
        reason: 'not_the_owner',
        channelId: 'D0ALICE',
      });
      gate.release();
      await expectCompletedUnstopped(h);
      // A DM's owner is known from the database: Slack was not asked who is in it.
      expect(h.slack.callsTo('conversations.members')).toHaveLength(0);
      expect(h.logs.some((line) => line.includes('stop refused') && line.includes('UBOB'))).toBe(true);
    },
  );

  it('Alice may stop the work in her own DM', async () => {
    h = await startHarness();
    h.model.enqueue(reply.hang());
    const ts = await h.message('take your time', { user: 'UALICE', channel: 'D0ALICE', channelType: 'im' });
    await h.model.waitForRequests(1);
    await h.sendEvent(stopEvent('D0ALICE', ts, 'UALICE'));
    await h.waitForText((text) => text.startsWith('Stopped by <@UALICE>'));
    expect(await refusals(h)).toEqual([]);
    expect(h.slack.callsTo('conversations.members')).toHaveLength(0);
  });

  it('a member of the channel may stop; the members are read page by page once and then taken from the cache', async () => {
    h = await startHarness();
    // 450 members: three pages of 200; the stopper is on the last one.
    const members = Array.from({ length: 450 }, (_, i) => `U0M${String(i).padStart(4, '0')}`);
    members[420] = 'U0MEMBER';
    h.slack.setMembers('C1', ['UBOT', ...members]);

    h.model.enqueue(reply.hang());
    const first = await h.mention('take your time');
    await h.model.waitForRequests(1);
    await h.sendEvent(stopEvent('C1', first, 'U0MEMBER'));
    await h.waitForText((text) => text.startsWith('Stopped by <@U0MEMBER>'));
    const pages = h.slack.callsTo('conversations.members');
    expect(pages.map((call) => call.params.channel)).toEqual(['C1', 'C1', 'C1']);
    expect(pages[0]?.params.cursor).toBeUndefined();
    expect(pages.slice(1).every((call) => typeof call.params.cursor === 'string')).toBe(true);

    // Another thread of the same channel, stopped by the same member: Slack is not asked again.
    h.model.enqueue(reply.hang());
    const second = await h.mention('and this one too');
    await h.model.waitForRequests(2);
    await h.sendEvent(stopEvent('C1', second, 'U0MEMBER'));
    await waitUntil(
      () => h.texts().filter((text) => text.startsWith('Stopped by <@U0MEMBER>')).length === 2 || undefined,
      { timeoutMs: 10_000, message: 'the second run was not stopped' },
    );
    expect(h.slack.callsTo('conversations.members')).toHaveLength(3);
    expect(await refusals(h)).toEqual([]);
  });

  it('a stop from someone who is not in the channel is refused and audited; the run completes', async () => {
    const gate = gatedTool();
    h = await startHarness({ overrides: { tools: (builtIn) => [...builtIn, gate.tool] } });
    const ts = await startBusyRun(h, gate, () => h.mention('look it up'));

    await h.sendEvent(stopEvent('C1', ts, 'U0STRANGER'));
    const [refused] = await waitUntil(async () => {
      const found = await refusals(h);
      return found.length > 0 ? found : undefined;
    });
    expect(refused?.actor).toBe('U0STRANGER');
    expect(JSON.parse(String(refused?.payload))).toMatchObject({ reason: 'not_in_channel', channelId: 'C1' });
    expect(h.slack.callsTo('conversations.members').map((call) => call.params.channel)).toEqual(['C1']);
    gate.release();
    await expectCompletedUnstopped(h);
  });

  it('when Slack cannot say who is in the channel, only the thread’s starter may stop', async () => {
    const gate = gatedTool();
    h = await startHarness({ overrides: { tools: (builtIn) => [...builtIn, gate.tool] } });
    h.slack.setResponse('conversations.members', () => slackReply.error('missing_scope'));
    const ts = await startBusyRun(h, gate, () => h.mention('look it up', { user: 'U0STARTER' }));

    await h.sendEvent(stopEvent('C1', ts, 'U0STOPPER'));
    await waitUntil(async () => (await refusals(h)).length > 0 || undefined);
    await h.sendEvent(stopEvent('C1', ts, 'U0STARTER'));
    await waitUntil(
      async () => (await rows(h.database, 'select stop_requested_by from runs'))[0]?.stop_requested_by,
      { message: 'the starter’s stop was not recorded' },
    );
    gate.release();
    await h.waitForText((text) => text.startsWith('Stopped by <@U0STARTER>'));
    expect(await rows(h.database, 'select status, stop_requested_by from runs')).toEqual([
      { status: 'cancelled', stop_requested_by: 'U0STARTER' },
    ]);
    // Only the refused stop asked Slack; the starter's needed no lookup.
    expect(h.slack.callsTo('conversations.members')).toHaveLength(1);
  });
});
