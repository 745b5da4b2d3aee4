import { describe, expect, it } from 'vitest';
import { ModelError } from '../../src/agent/model.js';
import { readCompletionStream } from '../../src/model/openai/openai-stream.js';

async function* chunks(...items: unknown[]): AsyncIterable<unknown> {
  for (const item of items) yield item;
}

/** The stream said `data: [DONE]`. */
const ended = () => true;

const delta = (d: Record<string, unknown>) => ({ choices: [{ index: 0, delta: d, finish_reason: null }] });

describe('readCompletionStream', () => {
  it('hands text deltas on as they come and joins tool-call fragments by index', async () => {
    const seen: string[] = [];
    const response = await readCompletionStream(
      chunks(
        delta({ role: 'assistant', content: '' }),
        delta({ content: 'Let me ' }),
        delta({ content: 'check.' }),
        delta({
          tool_calls: [
            { index: 0, id: 'call_a', type: 'function', function: { name: 'list_notes', arguments: '' } },
          ],
        }),
        delta({
          tool_calls: [
            {
              index: 1,
              id: 'call_b',
              type: 'function',
              function: { name: 'create_note', arguments: '{"te' },
            },
          ],
        }),
        delta({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }),
        delta({ tool_calls: [{ index: 1, function: { arguments: 'xt":"hi"}' } }] }),
        { choices: [], usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 } },
      ),
      (text) => seen.push(text),
      ended,
    );
    expect(seen).toEqual(['Let me ', 'check.']);
    expect(response).toEqual({
      text: 'Let me check.',
      toolCalls: [
        { callId: 'call_a', name: 'list_notes', arguments: '{}' },
        { callId: 'call_b', name: 'create_note', arguments: '{"text":"hi"}' },
      ],
      usage: { promptTokens: 3, completionTokens: 4, totalTokens: 7 },
    });
  });

  it('refuses a stream without choices, an unreadable chunk, or a tool call that never got a name', async () => {
    const none = () => undefined;
    await expect(readCompletionStream(chunks({ choices: [] }), none, ended)).rejects.toBeInstanceOf(
      ModelError,
    );
    await expect(readCompletionStream(chunks({ choices: 'x' }), none, ended)).rejects.toBeInstanceOf(
      ModelError,
    );
    await expect(
      readCompletionStream(
        chunks(delta({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] })),
        none,
        ended,
      ),
    ).rejects.toThrow(/has no name/);
  });
});

describe('readCompletionStream, as servers really stream', () => {
  const none = () => undefined;
  const call = { index: 0, id: 'c1', function: { name: 'list_notes', arguments: '{}' } };

  it('takes usage from the chunk that carries it, with choices or without', async () => {
    const onChoice = await readCompletionStream(
      chunks({
        choices: [{ index: 0, delta: { tool_calls: [call] }, finish_reason: 'tool_calls' }],
        usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 },
      }),
      none,
      ended,
    );
    expect(onChoice.usage).toEqual({ promptTokens: 5, completionTokens: 2, totalTokens: 7 });
    const last = await readCompletionStream(
      chunks(delta({ content: 'hi' }), {
        choices: [],
        usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
      }),
      none,
      ended,
    );
    expect(last.usage.totalTokens).toBe(2);
  });

  it('keeps tool calls whatever the finish_reason says (none, or "stop")', async () => {
    const stop = await readCompletionStream(
      chunks({ choices: [{ index: 0, delta: { tool_calls: [call] }, finish_reason: 'stop' }] }),
      none,
      ended,
    );
    expect(stop.toolCalls).toEqual([{ callId: 'c1', name: 'list_notes', arguments: '{}' }]);
    const missing = await readCompletionStream(
      chunks({ choices: [{ delta: { tool_calls: [call] } }] }),
      none,
      ended,
    );
    expect(missing.toolCalls).toHaveLength(1);
  });

  it('keeps reasoning_content only for a message with tool calls', async () => {
    const text = await readCompletionStream(
      chunks(delta({ reasoning_content: 'hmm' }), delta({ content: 'Hello' })),
      none,
      ended,
    );
    expect(text.serverFields).toBeUndefined();
  });
});

describe('readCompletionStream, a stream that stopped before its end', () => {
  const none = () => undefined;
  const notEnded = () => false;

  it('is cut off when neither a finish_reason nor [DONE] came: its text and truncated calls are no answer', async () => {
    const cut = readCompletionStream(
      chunks(
        delta({ content: 'Adding it' }),
        delta({ tool_calls: [{ index: 0, id: 'c1', function: { name: 'create_note', arguments: '{"te' } }] }),
      ),
      none,
      notEnded,
    );
    await expect(cut).rejects.toMatchObject({ code: 'model.interrupted' });
  });

  it('is whole with a finish_reason but no [DONE], or [DONE] but no finish_reason', async () => {
    const finished = await readCompletionStream(
      chunks({ choices: [{ index: 0, delta: { content: 'Hi.' }, finish_reason: 'stop' }] }),
      none,
      notEnded,
    );
    expect(finished.text).toBe('Hi.');
    const done = await readCompletionStream(
      chunks({ choices: [{ delta: { content: 'Hi.' } }] }),
      none,
      ended,
    );
    expect(done.text).toBe('Hi.');
  });

  it('serialises tool-call arguments sent as a JSON object (Hugging Face TGI)', async () => {
    const response = await readCompletionStream(
      chunks({
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                { index: 0, id: '0', function: { name: 'create_note', arguments: { text: 'hi' } } },
              ],
            },
            finish_reason: 'tool_calls',
          },
        ],
      }),
      none,
      notEnded,
    );
    expect(response.toolCalls).toEqual([{ callId: '0', name: 'create_note', arguments: '{"text":"hi"}' }]);
  });
});
