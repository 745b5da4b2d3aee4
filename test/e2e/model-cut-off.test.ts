import { afterEach, describe, expect, it } from 'vitest';
import { CUT_OFF_MARK } from '../../src/slack/answer-stream.js';
import { type ChatRequest, reply } from '../support/fake-openai.js';
import { type Harness, startHarness } from './harness.js';

/**
 * The model's connection breaking off in the middle of a streamed answer, through the real openai client and the
 * real bot: the answer is asked again (within the retries of 429/5xx/timeouts), the cut text never passes for an
 * answer, and a cut-off tool call is never planned, carded or run.
 */

const LONG_ANSWER = Array.from(
  { length: 12 },
  (_, i) => `Line ${i + 1}: the agent keeps writing so that the answer arrives in several pieces.`,
).join('\n');
/** The first part of the answer, cut in the middle of a line: long enough that Slack shows some of it. */
const PARTIAL = LONG_ANSWER.slice(0, 400);
const BROKE_OFF = 'The connection to the model service broke off in the middle of its answer';

function chunk(delta: Record<string, unknown>, finish: string | null = null) {
  return {
    id: 'chatcmpl-cut',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'fake',
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
}
const toolFragment = (index: number, id: string, name: string, args: string) =>
  chunk({ tool_calls: [{ index, id, type: 'function', function: { name, arguments: args } }] });

const assistantCalls = (request: ChatRequest | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === 'assistant').flatMap((m) => m.tool_calls ?? []);
const roles = (request: ChatRequest | undefined) => (request?.messages ?? []).map((m) => m.role);

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** The bot as in production: the model client retries twice. */
const start = () => startHarness({ modelRetries: 2 });

describe('a model connection that breaks off mid-answer', () => {
  it('a socket reset mid-text is asked again: one message, the cut text marked, the answer once, no failure', async () => {
    h = await start();
    h.model.enqueue(reply.streamThenHang(PARTIAL), reply.text(LONG_ANSWER), reply.text('Yes.'));
    const ts = await h.mention('tell me a lot');
    // Slack shows part of the answer, then the model's connection is reset.
    await h.slack.waitForCall('chat.startStream');
    expect(h.model.breakOpenStreams()).toBe(1);

    const shown = await h.waitForText((text) => text.endsWith(LONG_ANSWER));
    await h.bot.conversations.idle();
    expect(h.model.requests).toHaveLength(2);
    expect(h.messages()).toHaveLength(1);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(0);
    const [cut, answer, ...more] = shown.split(CUT_OFF_MARK);
    expect(more).toEqual([]);
    expect(answer).toBe(LONG_ANSWER);
    expect(cut?.length).toBeGreaterThan(0);
    expect(PARTIAL.startsWith(cut ?? 'x')).toBe(true);

    // Only the whole answer is in the conversation the model reads next.
    await h.message('really?', { threadTs: ts });
    await h.waitForText((text) => text === 'Yes.');
    const assistant = h.model.requests[2]?.messages.filter((m) => m.role === 'assistant');
    expect(assistant?.map((m) => m.content)).toEqual([LONG_ANSWER]);
  });

  it('a stream cut inside tool-call arguments creates no card and runs nothing; the retry’s call gets its card', async () => {
    h = await start();
    h.model.enqueue(
      reply.sseCut([toolFragment(0, 'call_cut', 'create_note', '{"text": "hal')]),
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'halved' } }]),
      reply.text('Added.'),
    );
    await h.mention('add a note halved');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(h.model.requests).toHaveLength(2);
    // The retry is the same request: the cut call is nowhere in it.
    expect(roles(h.model.requests[1])).toEqual(['system', 'user']);
    expect(JSON.stringify(card.params.blocks)).toContain('halved');
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Added.');
    expect(h.cards()).toHaveLength(1);
    expect(assistantCalls(h.model.requests[2])).toMatchObject([
      { function: { name: 'create_note', arguments: '{"text":"halved"}' } },
    ]);
    expect(h.model.requests[2]?.messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual([
      'Created note #1.',
    ]);
  });

  it('a stream that stops without its finish reason or [DONE] is incomplete: none of its calls is planned or run', async () => {
    h = await start();
    h.model.enqueue(
      // Ended cleanly between two chunks (a proxy closing it): a whole free call, then a truncated one.
      reply.sse([
        toolFragment(0, 'call_free', 'list_notes', '{}'),
        toolFragment(1, 'call_half', 'create_note', '{"text": "ha'),
      ]),
      reply.text('Which note should I add?'),
    );
    await h.mention('add a note');
    await h.waitForText((text) => text === 'Which note should I add?');
    await h.bot.conversations.idle();
    expect(h.model.requests).toHaveLength(2);
    expect(roles(h.model.requests[1])).toEqual(['system', 'user']);
    expect(h.cards()).toHaveLength(0);
    const tasks = h.slack.calls.filter((c) => JSON.stringify(c.params.chunks ?? '').includes('task_update'));
    expect(tasks).toHaveLength(0);
  });

  it('a break that persists past the retries ends in one sentence, the cut text marked; nothing is lost', async () => {
    h = await start();
    h.model.setHandler(() => reply.sseCut([chunk({ role: 'assistant', content: PARTIAL })]));
    const ts = await h.mention('tell me a lot');
    await h.waitForText((text) => text.startsWith(BROKE_OFF));
    await h.bot.conversations.idle();
    expect(h.model.requests).toHaveLength(3);
    const messages = h.messages();
    expect(messages.map((m) => m.via)).toEqual(['stream', 'post']);
    expect(messages[1]?.text).toMatch(/please try again/);
    // Whatever Slack showed of each cut answer ends in the mark.
    const streamed = messages[0]?.text ?? '';
    expect(streamed.endsWith(CUT_OFF_MARK.trimEnd()) || streamed.endsWith(CUT_OFF_MARK)).toBe(true);
    for (const part of streamed.split(CUT_OFF_MARK).filter((p) => p.trim() !== '')) {
      expect(PARTIAL.startsWith(part)).toBe(true);
    }

    h.model.setHandler(undefined);
    h.model.enqueue(reply.text('Here it is.'));
    await h.message('try again', { threadTs: ts });
    await h.waitForText((text) => text === 'Here it is.');
    const users = h.model.requests.at(-1)?.messages.filter((m) => m.role === 'user');
    expect(users?.map((m) => m.content)).toEqual(['tell me a lot', 'try again']);
    expect(h.model.requests.at(-1)?.messages.some((m) => m.role === 'assistant')).toBe(false);
  });
});
