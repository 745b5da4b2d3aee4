import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { slackReply } from '../support/fake-slack.js';
import { type Harness, startHarness } from './harness.js';

/** Every status the bot set in a thread, in order ('' clears it). */
function statuses(h: Harness, threadTs: string): string[] {
  return h.slack
    .callsTo('assistant.threads.setStatus')
    .filter((call) => call.params.thread_ts === threadTs)
    .map((call) => String(call.params.status));
}

/** An app not declared as an agent: Slack refuses its sessions. */
function refuseSessions(h: Harness): void {
  h.slack.setResponse('agents.sessions.setStatus', () => slackReply.error('not_authorized'));
}

describe('progress while the agent works, where Slack refuses agent sessions', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('sets "is thinking…", names the tool it runs, and clears the status once the answer is posted', async () => {
    h = await startHarness();
    refuseSessions(h);
    h.model.enqueue(reply.toolCalls([{ name: 'list_notes', arguments: {} }]), reply.text('No notes yet.'));
    const ts = await h.mention('which notes do we have?');
    await h.waitForText((text) => text === 'No notes yet.');
    await h.slack.waitForCall('assistant.threads.setStatus', (c) => c.params.status === '');
    expect(statuses(h, ts)).toEqual(['is thinking…', 'is running list_notes…', '']);
    const status = h.slack.callsTo('assistant.threads.setStatus')[0];
    expect(status?.params.channel_id).toBe('C1');
    // The status is cleared after the answer went out, so it never outlives the work.
    const order = h.slack.calls.map((c) => c.method);
    expect(order.lastIndexOf('assistant.threads.setStatus')).toBeGreaterThan(
      order.indexOf('chat.stopStream'),
    );
    expect(h.slack.callsTo('reactions.add')).toHaveLength(0);
  });

  it('clears the status when an approval card is posted', async () => {
    h = await startHarness();
    refuseSessions(h);
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'x' } }]));
    const ts = await h.mention('add a note x');
    await h.waitForCards(1);
    await h.slack.waitForCall('assistant.threads.setStatus', (c) => c.params.status === '');
    expect(statuses(h, ts)).toEqual(['is thinking…', '']);
  });

  it('falls back to a 👀 reaction on the message when the status is refused, and removes it afterwards', async () => {
    h = await startHarness();
    refuseSessions(h);
    h.slack.setResponse('assistant.threads.setStatus', () => slackReply.error('missing_scope'));
    h.model.enqueue(reply.toolCalls([{ name: 'list_notes', arguments: {} }]), reply.text('Nothing.'));
    const ts = await h.mention('notes?');
    await h.waitForText((text) => text === 'Nothing.');
    const removed = await h.slack.waitForCall('reactions.remove');
    const added = h.slack.callsTo('reactions.add');
    expect(added).toHaveLength(1);
    expect(added[0]?.params).toMatchObject({ channel: 'C1', timestamp: ts, name: 'eyes' });
    expect(removed.params).toMatchObject({ channel: 'C1', timestamp: ts, name: 'eyes' });
    // Refused once, neither is asked for again during this run.
    expect(h.slack.callsTo('assistant.threads.setStatus')).toHaveLength(1);
    expect(h.slack.callsTo('agents.sessions.setStatus')).toHaveLength(1);
  });

  it('remembers the refusal for the workspace: the next message does not ask for a session again', async () => {
    h = await startHarness();
    refuseSessions(h);
    h.model.enqueue(reply.text('First.'), reply.text('Second.'));
    const first = await h.mention('one');
    await h.waitForText((text) => text === 'First.');
    await h.slack.waitForCall(
      'assistant.threads.setStatus',
      (c) => c.params.thread_ts === first && c.params.status === '',
    );
    const second = await h.mention('two');
    await h.waitForText((text) => text === 'Second.');
    await h.slack.waitForCall(
      'assistant.threads.setStatus',
      (c) => c.params.thread_ts === second && c.params.status === '',
    );
    expect(h.slack.callsTo('agents.sessions.setStatus')).toHaveLength(1);
    expect(statuses(h, second)).toEqual(['is thinking…', '']);
  });

  it('answers even when both the status and the reaction fail', async () => {
    h = await startHarness();
    refuseSessions(h);
    h.slack.setResponse('assistant.threads.setStatus', () => slackReply.error('not_allowed'));
    h.slack.setResponse('reactions.add', () => slackReply.error('missing_scope'));
    h.model.enqueue(reply.text('Still here.'));
    await h.mention('hello');
    await h.waitForText((text) => text === 'Still here.');
    await h.bot.conversations.idle();
    expect(h.slack.callsTo('reactions.remove')).toHaveLength(0);
  });
});
