import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { slackReply } from '../support/fake-slack.js';
import { waitUntil } from '../support/wait.js';
import { type Harness, startHarness } from './harness.js';

/** An answer of several lines, long enough to be streamed in more than one piece. */
const LONG_ANSWER = Array.from(
  { length: 12 },
  (_, i) => `Line ${i + 1}: the agent keeps writing so that the answer arrives in several pieces.`,
).join('\n');

describe('streamed answers', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('streams the answer into the thread for the person who asked: start, append, stop', async () => {
    h = await startHarness();
    h.model.enqueue(reply.text(LONG_ANSWER));
    const ts = await h.mention('tell me a lot', { user: 'U7' });
    await h.waitForText((text) => text === LONG_ANSWER);
    expect(h.model.requests[0]?.stream).toBe(true);
    const start = await h.slack.waitForCall('chat.startStream');
    expect(start.params).toMatchObject({
      channel: 'C1',
      thread_ts: ts,
      recipient_user_id: 'U7',
      recipient_team_id: 'T1',
    });
    const streamTs = (start.reply as { ts: string }).ts;
    const appends = h.slack.callsTo('chat.appendStream');
    expect(appends.length).toBeGreaterThan(0);
    expect(appends.every((call) => call.params.ts === streamTs)).toBe(true);
    const stop = await h.slack.waitForCall('chat.stopStream');
    expect(stop.params.ts).toBe(streamTs);
    expect(h.messages()).toHaveLength(1);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
  });

  it('keeps text streamed before a tool call, shows the call as a task, and goes on with the answer in the same message', async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([{ name: 'list_notes', arguments: {} }], 'Let me look at the notes.'),
      reply.text('There are no notes.'),
    );
    await h.mention('notes?');
    await h.waitForText((text) => text.endsWith('There are no notes.'));
    expect(h.messages().map((m) => [m.via, m.text])).toEqual([
      ['stream', 'Let me look at the notes.\n\nThere are no notes.'],
    ]);
    // The task comes after the text before it, and before the answer.
    const order = h.slack.calls
      .filter((c) => c.method.startsWith('chat.') && c.method.includes('Stream'))
      .map((c) => (JSON.stringify(c.params.chunks ?? '').includes('task_update') ? 'task' : c.method));
    expect(order[0]).toBe('chat.startStream');
    expect(order.indexOf('task')).toBeGreaterThan(0);
    expect(order.at(-1)).toBe('chat.stopStream');
    const second = h.model.requests[1]?.messages.find((m) => m.role === 'assistant');
    expect(second?.content).toBe('Let me look at the notes.');
  });

  it('a streamed tool call that needs approval pauses the run; the answer after the click streams to the requester', async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'streamed' } }], 'I will add it.'),
      reply.text('Added.'),
    );
    const ts = await h.mention('add a note', { user: 'U1' });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(h.model.requests[0]?.stream).toBe(true);
    // The words before the pause stay in the thread, finished before the card appears.
    expect(h.texts()).toEqual(['I will add it.']);
    const methods = h.slack.calls.map((c) => c.method);
    expect(methods.indexOf('chat.stopStream')).toBeLessThan(methods.indexOf('chat.postMessage'));
    expect(h.model.requests).toHaveLength(1);

    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Added.');
    const starts = h.slack.callsTo('chat.startStream');
    expect(starts.at(-1)?.params).toMatchObject({ thread_ts: ts, recipient_user_id: 'U1' });
  });

  it('posts the answer as a message when Slack refuses to stream', async () => {
    h = await startHarness();
    h.slack.setResponse('chat.startStream', () => slackReply.error('not_allowed_token_type'));
    h.model.enqueue(reply.text(LONG_ANSWER));
    const ts = await h.mention('tell me a lot');
    await h.waitForText((text) => text === LONG_ANSWER);
    const posted = h.slack.callsTo('chat.postMessage');
    expect(posted).toHaveLength(1);
    expect(posted[0]?.params.thread_ts).toBe(ts);
    expect(h.slack.callsTo('chat.appendStream')).toHaveLength(0);
  });

  it('when appending fails midway, stops the stream and posts the rest, so the whole answer is shown', async () => {
    h = await startHarness();
    h.slack.setResponse('chat.appendStream', () => slackReply.error('message_not_in_streaming_state'));
    h.model.enqueue(reply.text(LONG_ANSWER));
    await h.mention('tell me a lot');
    await h.waitForText((text) => text !== LONG_ANSWER && LONG_ANSWER.endsWith(text));
    const [streamed, posted] = h.messages();
    expect(streamed?.via).toBe('stream');
    expect(posted?.via).toBe('post');
    expect(`${streamed?.text}${posted?.text}`.replace(/\s+/g, ' ')).toBe(LONG_ANSWER.replace(/\s+/g, ' '));
    expect(h.slack.callsTo('chat.stopStream')).toHaveLength(1);
  });

  it('when the stream and its fallback both fail, the rest of the answer stays owed and is posted once Slack recovers', async () => {
    h = await startHarness({ overrides: { deliveryRetryMs: 100 } });
    h.slack.setResponse('chat.appendStream', () => slackReply.error('message_not_in_streaming_state'));
    let outage = true;
    h.slack.setResponse('chat.postMessage', (params) =>
      outage ? slackReply.http(500) : h.slack.defaultReply('chat.postMessage', params),
    );
    h.model.enqueue(reply.text(LONG_ANSWER));
    await h.mention('tell me a lot');
    const refused = await h.slack.waitForCall('chat.postMessage');
    outage = false;
    // The post Slack refused is tried again, with the same text, once Slack answers again.
    const retried = await waitUntil(() => h.slack.callsTo('chat.postMessage')[1], { timeoutMs: 10_000 });
    expect(retried.params.text).toBe(refused.params.text);
    expect(retried.params.thread_ts).toBe(refused.params.thread_ts);
  });

  it('OPENAI_STREAM=false asks the model for one response and posts the answer', async () => {
    h = await startHarness({ env: { OPENAI_STREAM: 'false' } });
    h.model.enqueue(reply.text('Plain answer.'));
    await h.mention('hi');
    await h.waitForText((text) => text === 'Plain answer.');
    expect(h.model.requests[0]?.stream).toBeUndefined();
    expect(h.slack.callsTo('chat.startStream')).toHaveLength(0);
    expect(h.messages().map((m) => m.via)).toEqual(['post']);
  });
});
