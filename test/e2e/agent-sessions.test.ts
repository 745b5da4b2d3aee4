import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { type SlackCall, slackReply } from '../support/fake-slack.js';
import { nextTs } from '../support/slack-requests.js';
import { DATABASE_KINDS } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { execute, rows } from './db-rows.js';
import { gatedTool } from './gated-tool.js';
import { cardTs, type Harness, isApprovalCard, startHarness } from './harness.js';

/** The session statuses the bot set in a thread, in order, repeats collapsed. */
function sessionStatuses(h: Harness, threadTs: string): string[] {
  const all = h.slack
    .callsTo('agents.sessions.setStatus')
    .filter((call) => call.params.thread_ts === threadTs)
    .map((call) => String(call.params.status));
  return all.filter((status, index) => status !== all[index - 1]);
}

/** Slack's `agent_session_stopped`: `user` clicked the stop button of the thread's session. */
function stopEvent(threadTs: string, user: string, streams: string[] = []) {
  return {
    type: 'agent_session_stopped',
    channel: 'C1',
    thread_ts: threadTs,
    user,
    streaming_message_ts: streams,
    event_ts: nextTs(),
  };
}

function waitForStatus(h: Harness, threadTs: string, status: string): Promise<SlackCall> {
  return h.slack.waitForCall(
    'agents.sessions.setStatus',
    (c) => c.params.thread_ts === threadTs && c.params.status === status,
    10_000,
  );
}

async function auditOf(h: Harness, kind: string) {
  return rows(
    h.database,
    'select actor, run_id, approval_id, payload from audit_events where kind = ? order by seq',
    kind,
  );
}

describe("Slack's agent sessions", () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('shows processing with a title, suspended while a card waits, processing again once approved, active after the answer', async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'milk' } }]),
      reply.text('I added the note.'),
    );
    const ts = await h.mention('please add a note saying milk');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await waitForStatus(h, ts, 'suspended');
    expect(sessionStatuses(h, ts)).toEqual(['processing', 'suspended']);
    const [created] = h.slack.callsTo('agents.sessions.setStatus');
    expect(created?.params).toMatchObject({
      channel_id: 'C1',
      thread_ts: ts,
      status: 'processing',
      title: 'please add a note saying milk',
      initiator_user_id: 'U1',
    });
    // Suspended only once the card is in the thread.
    const methods = h.slack.calls.map((c) => c.method);
    const suspendedAt = h.slack.calls.findIndex(
      (c) => c.method === 'agents.sessions.setStatus' && c.params.status === 'suspended',
    );
    expect(suspendedAt).toBeGreaterThan(methods.indexOf('chat.postMessage'));

    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'I added the note.');
    await waitForStatus(h, ts, 'active');
    expect(sessionStatuses(h, ts)).toEqual(['processing', 'suspended', 'processing', 'active']);
    // Active is set after the streamed answer ended, so it is the session's last word.
    const order = h.slack.calls.map((c) => c.method);
    expect(order.lastIndexOf('agents.sessions.setStatus')).toBeGreaterThan(
      order.lastIndexOf('chat.stopStream'),
    );
    // The title is sent when the session is created only.
    const titled = h.slack.callsTo('agents.sessions.setStatus').filter((c) => c.params.title !== undefined);
    expect(titled).toHaveLength(1);
    // Nothing of the fallbacks.
    expect(h.slack.callsTo('assistant.threads.setStatus')).toHaveLength(0);
    expect(h.slack.callsTo('reactions.add')).toHaveLength(0);
  });

  it('stop while the model is slow: the request is abandoned, the thread says who stopped it, the next message starts afresh', async () => {
    h = await startHarness();
    h.model.enqueue(reply.toolCalls([{ name: 'list_notes', arguments: {} }]), reply.hang());
    const ts = await h.mention('list the notes, slowly');
    await h.model.waitForRequests(2);
    await waitForStatus(h, ts, 'processing');

    await h.sendEvent(stopEvent(ts, 'U0STOPPER'));
    const said = await h.waitForText((text) => text.startsWith('Stopped by'));
    expect(said).toContain('<@U0STOPPER>');
    await waitForStatus(h, ts, 'active');
    expect(sessionStatuses(h, ts).at(-1)).toBe('active');

    const [cancelled] = await auditOf(h, 'run.cancelled');
    expect(cancelled?.actor).toBe('U0STOPPER');
    expect(String(cancelled?.payload)).toContain('stopped by <@U0STOPPER>');
    const [run] = await rows(h.database, 'select status, stop_requested_by from runs');
    expect(run).toMatchObject({ status: 'cancelled', stop_requested_by: 'U0STOPPER' });

    h.model.enqueue(reply.text('Here I am again.'));
    await h.message('are you there?', { threadTs: ts });
    await h.waitForText((text) => text === 'Here I am again.');
    // The stopped run asked the model nothing more: two requests for it, one for the new message.
    expect(h.model.requests).toHaveLength(3);
    const runs = await rows(h.database, 'select status from runs order by created_at');
    expect(runs.map((r) => r.status)).toEqual(['cancelled', 'completed']);
  });

  it.each(DATABASE_KINDS)(
    'stop while a card waits (%s): nothing executes, the card says who stopped it without buttons, the audit names them',
    async (kind) => {
      h = await startHarness({ kind });
      h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'secret plan' } }]));
      const ts = await h.mention('add a note: secret plan');
      const [card] = await h.waitForCards(1);
      if (!card) throw new Error('no card');
      await waitForStatus(h, ts, 'suspended');

      await h.sendEvent(stopEvent(ts, 'U0STOPPER'));
      await h.waitForText((text) => text.startsWith('Stopped by <@U0STOPPER>'));
      const update = await h.slack.waitForCall('chat.update', (c) => c.params.ts === cardTs(card));
      const blocks = JSON.stringify(update.params.blocks);
      expect(blocks).toContain('stopped by <@U0STOPPER>');
      expect(blocks).not.toContain('approval:approve');
      await waitForStatus(h, ts, 'active');
      // Never shown as working again: the stop only ended the run.
      expect(sessionStatuses(h, ts)).toEqual(['processing', 'suspended', 'active']);

      const [approval] = await rows(h.database, 'select status, reason from approvals');
      expect(approval).toMatchObject({ status: 'cancelled', reason: 'stopped by <@U0STOPPER>' });
      const [cancelled] = await auditOf(h, 'run.cancelled');
      expect(cancelled?.actor).toBe('U0STOPPER');
      // The tokens the run used before it was stopped count in the usage report.
      const { usage } = JSON.parse(String(cancelled?.payload));
      expect(usage.promptTokens).toBeGreaterThan(0);
      expect((await auditOf(h, 'approval.cancelled'))[0]?.actor).toBe('U0STOPPER');

      // A click on the stale card executes nothing.
      await h.click(card, 'approve', 'U2');
      h.model.enqueue(reply.text('Fresh start.'));
      await h.message('what now?', { threadTs: ts });
      await h.waitForText((text) => text === 'Fresh start.');
      await h.bot.conversations.idle();
      expect(await rows(h.database, 'select id from notes')).toHaveLength(0);
      expect(h.model.requests).toHaveLength(2);
      const toolMessages = h.model.requests[1]?.messages.filter((m) => m.role === 'tool') ?? [];
      expect(toolMessages.map((m) => String(m.content))).not.toContain('Created note #1.');
      expect(await auditOf(h, 'tool.started')).toHaveLength(0);
    },
  );

  it('stop while a tool runs: the tool finishes, its output is kept, the model is not called again', async () => {
    const gate = gatedTool();
    h = await startHarness({ overrides: { tools: (builtIn) => [...builtIn, gate.tool] } });
    h.model.enqueue(reply.toolCalls([{ name: 'slow_lookup', arguments: {} }]));
    const ts = await h.mention('look it up');
    await gate.whenStarted();
    await h.sendEvent(stopEvent(ts, 'U0STOPPER'));
    await waitUntil(
      async () => (await rows(h.database, 'select stop_requested_by from runs'))[0]?.stop_requested_by,
      {
        message: 'the stop was not recorded',
      },
    );
    gate.release();
    await h.waitForText((text) => text.startsWith('Stopped by <@U0STOPPER>'));
    expect(h.model.requests).toHaveLength(1);
    const outputs = await rows(h.database, "select data from conversation_items where kind = 'tool_output'");
    expect(String(outputs[0]?.data)).toContain('looked up');
  });

  it('stop while a tool runs in a turn that also waits for a card: the run ends instead of pausing, nothing waits', async () => {
    const gate = gatedTool();
    h = await startHarness({ overrides: { tools: (builtIn) => [...builtIn, gate.tool] } });
    h.model.enqueue(
      reply.toolCalls([
        { name: 'create_note', arguments: { text: 'secret plan' } },
        { name: 'slow_lookup', arguments: {} },
      ]),
    );
    const ts = await h.mention('add a note and look it up');
    await gate.whenStarted();
    await h.sendEvent(stopEvent(ts, 'U0STOPPER'));
    await waitUntil(
      async () => (await rows(h.database, 'select stop_requested_by from runs'))[0]?.stop_requested_by,
      { message: 'the stop was not recorded' },
    );
    gate.release();
    await h.waitForText((text) => text.startsWith('Stopped by <@U0STOPPER>'));
    await h.bot.conversations.idle();
    const [run] = await rows(h.database, 'select status from runs');
    expect(run?.status).toBe('cancelled');
    const [approval] = await rows(h.database, 'select status, reason from approvals');
    expect(approval).toMatchObject({ status: 'cancelled', reason: 'stopped by <@U0STOPPER>' });
    // The stopped request never offered its buttons, and the model was not asked again.
    expect(h.slack.calls.filter(isApprovalCard)).toHaveLength(0);
    expect(h.model.requests).toHaveLength(1);
    expect(await auditOf(h, 'run.paused')).toHaveLength(0);
  });

  it('stop while the answer streams: what was shown stays, the rest is never posted', async () => {
    h = await startHarness();
    const shown = Array.from(
      { length: 8 },
      (_, i) => `Line ${i + 1} of an answer that is being written.`,
    ).join('\n');
    h.model.enqueue(reply.streamThenHang(`${shown}\nA last line still being writ`));
    const ts = await h.mention('write a lot');
    const started = await h.slack.waitForCall('chat.startStream');
    const streamTs = String((started.reply as { ts: string }).ts);
    // As Slack does once someone clicks stop: the stream it listed is stopped and takes nothing more.
    h.slack.setResponse('chat.appendStream', () => slackReply.error('message_not_in_streaming_state'));
    h.slack.setResponse('chat.stopStream', () => slackReply.error('message_not_in_streaming_state'));
    await h.sendEvent(stopEvent(ts, 'U0STOPPER', [streamTs]));
    await h.waitForText((text) => text.startsWith('Stopped by <@U0STOPPER>'));
    await h.bot.conversations.idle();
    const posted = h.slack.callsTo('chat.postMessage').map((c) => String(c.params.text));
    expect(posted.filter((text) => text.includes('still being writ'))).toEqual([]);
    expect(posted).toHaveLength(1);
  });

  it('a stop recorded by another process reaches the process that drives the run', async () => {
    h = await startHarness({ overrides: { stopPollMs: 50 } });
    h.model.enqueue(reply.hang());
    const ts = await h.mention('take your time');
    await h.model.waitForRequests(1);
    // As another process would record it: the driver finds it in the database.
    await execute(
      h.database,
      "update runs set stop_requested_by = 'U0OTHER', stop_requested_at = 1 where status = 'running'",
    );
    await h.waitForText((text) => text.startsWith('Stopped by <@U0OTHER>'));
    await waitForStatus(h, ts, 'active');
    expect((await auditOf(h, 'run.cancelled'))[0]?.actor).toBe('U0OTHER');
  });

  it('a stop in a thread with nothing running sets the session back to active and changes nothing else', async () => {
    h = await startHarness();
    h.model.enqueue(reply.text('Done already.'));
    const ts = await h.mention('quick one');
    await h.waitForText((text) => text === 'Done already.');
    await waitForStatus(h, ts, 'active');
    const before = h.slack.callsTo('agents.sessions.setStatus').length;
    await h.sendEvent(stopEvent(ts, 'U0STOPPER'));
    await waitUntil(() => h.slack.callsTo('agents.sessions.setStatus').length > before || undefined, {
      timeoutMs: 5_000,
      message: 'the session was not set back to active',
    });
    expect(h.slack.callsTo('agents.sessions.setStatus').at(-1)?.params.status).toBe('active');
    expect(h.texts()).toEqual(['Done already.']);
    expect(await auditOf(h, 'run.cancelled')).toHaveLength(0);
  });

  it('ignores a stop event with malformed fields', async () => {
    h = await startHarness();
    await h.sendEvent({ type: 'agent_session_stopped', channel: 'C1', user: 42, thread_ts: 'nope' });
    await waitUntil(() => h.logs.find((line) => line.includes('agent_session_stopped')), {
      timeoutMs: 5_000,
      message: 'no warning logged',
    });
    expect(h.slack.callsTo('agents.sessions.setStatus')).toHaveLength(0);
  });
});
