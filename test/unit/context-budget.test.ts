import { describe, expect, it } from 'vitest';
import {
  type CountTokens,
  historyRoom,
  latestSummary,
  planContext,
  unitsOf,
} from '../../src/agent/context-budget.js';
import type { HistoryItem, StoredItem } from '../../src/agent/history.js';
import { contextTokensOf, encodingOf } from '../../src/known-models.js';
import { createTokenCounter } from '../../src/model/token-counter.js';

/** A word a token: enough to reason about the plan. */
const words: CountTokens = (text) => (text === '' ? 0 : text.split(/\s+/).length);

/** A conversation of `runs` runs, each a message, a turn with two calls and their outputs, and an answer. */
function conversation(runs: number): StoredItem[] {
  const items: StoredItem[] = [];
  const add = (item: HistoryItem, runId: string | null, turn: number | null) =>
    items.push({ ...item, seq: items.length + 1, runId, turn });
  add(
    { kind: 'thread_context', data: { messages: [{ ts: '1', author: '<@U9>', text: 'earlier words' }] } },
    null,
    null,
  );
  for (let r = 1; r <= runs; r += 1) {
    const run = `run${r}`;
    add({ kind: 'user_message', data: { text: `question ${r} with a few words`, userId: 'U1' } }, run, 0);
    add({ kind: 'assistant_message', data: { text: 'let me look' } }, run, 1);
    for (const c of ['a', 'b'])
      add({ kind: 'tool_call', data: { callId: `${r}${c}`, name: 't', arguments: '{}' } }, run, 1);
    for (const c of ['a', 'b']) {
      add(
        {
          kind: 'tool_output',
          data: { callId: `${r}${c}`, name: 't', output: 'some output words here', status: 'ok' },
        },
        run,
        1,
      );
    }
    add({ kind: 'assistant_message', data: { text: `answer ${r} in several words` } }, run, 2);
  }
  return items;
}

describe('fitting a conversation to the model context', () => {
  it('sends everything while it fits, the same messages as without a budget', () => {
    const plan = planContext(conversation(3), 'run3', 10_000, words);
    expect(plan.kind).toBe('fits');
  });

  it('never cuts between a call and its output, and keeps the current run whole, whatever the room', () => {
    const history = conversation(12);
    for (let room = 20; room < 700; room += 7) {
      const plan = planContext(history, 'run12', room, words);
      if (plan.kind === 'fits') continue;
      const kept = new Set(plan.keep.map((item) => item.seq));
      expect(plan.summarise.length + plan.keep.length).toBe(history.length);
      expect(plan.keep[0]?.kind).toMatch(/user_message|thread_context|assistant_message/);
      for (const unit of unitsOf(history)) {
        const inKept = unit.filter((item) => kept.has(item.seq)).length;
        expect([0, unit.length]).toContain(inKept);
      }
      expect(history.filter((item) => item.runId === 'run12').every((item) => kept.has(item.seq))).toBe(true);
    }
  });

  it('a summary stands for what it covers and is reused while the rest fits; it is a note, never a user message', () => {
    const history = conversation(12);
    const plan = planContext(history, 'run12', 200, words);
    if (plan.kind !== 'compact') throw new Error('expected a compaction');
    const throughSeq = plan.summarise.at(-1)?.seq ?? 0;
    const summarised: StoredItem = {
      kind: 'summary',
      data: { text: 'earlier: questions 1 to 9 answered', fromSeq: 1, throughSeq },
      seq: history.length + 1,
      runId: 'run12',
      turn: null,
    };
    const again = planContext([...history, summarised], 'run12', 200, words);
    if (again.kind !== 'fits') throw new Error('expected the summary to make it fit');
    expect(again.messages[0]).toMatchObject({ role: 'system' });
    expect(again.messages[0]?.role === 'system' && again.messages[0].content).toContain('questions 1 to 9');
    expect(again.messages.filter((m) => m.role === 'user' && m.content.includes('questions 1 to 9'))).toEqual(
      [],
    );
    expect(again.messages.filter((m) => m.role === 'user')).toHaveLength(
      plan.keep.filter((i) => i.kind === 'user_message').length,
    );
    // The next summary covers the earlier one's range too, and takes it in.
    const later = planContext(
      [...history, summarised, ...conversation(30).slice(history.length)],
      'run30',
      200,
      words,
    );
    expect(later).toMatchObject({ kind: 'compact', previous: summarised.data });
    expect(latestSummary([summarised])).toEqual(summarised.data);
  });

  it('the room is the context less the answer share, the instructions and the tools', () => {
    const room = historyRoom(
      { contextTokens: 1000, answerPercent: 20 },
      { instructions: 'one two three', tools: [] },
      words,
    );
    expect(room).toBe(800 - 3 - 4 - 3);
  });
});

describe('the model context and token counts known from the model name', () => {
  it('knows OpenAI models, defaults to 128,000 tokens and an estimate for the others', async () => {
    expect(contextTokensOf('gpt-4o-mini')).toBe(128_000);
    expect(contextTokensOf('gpt-5-mini')).toBe(400_000);
    expect(contextTokensOf('openai/gpt-4.1')).toBe(1_047_576);
    expect(contextTokensOf('gpt-4')).toBe(8_192);
    expect(contextTokensOf('qwen2.5:7b')).toBe(128_000);
    expect(encodingOf('gpt-4-turbo')).toBe('cl100k_base');
    expect(encodingOf('llama3.1')).toBe('estimate');
    const exact = await createTokenCounter('gpt-4o').counter();
    const estimate = await createTokenCounter('llama3.1').counter();
    const text = 'The quick brown fox jumps over the lazy dog, twice: <|endoftext|> and again.';
    expect(exact(text)).toBeGreaterThan(10);
    expect(estimate(text)).toBeGreaterThan(exact(text));
    // The count made from the length alone is never below the tokenizer's, in any script.
    for (const sample of [
      text,
      '会議は明日の午前十時からです。',
      '🙂🚀 ok',
      'x'.repeat(5000),
      '{"a":[1,2,3]}',
    ]) {
      expect(createTokenCounter('gpt-4o').bound(sample)).toBeGreaterThanOrEqual(exact(sample));
      expect(createTokenCounter('llama3.1').bound(sample)).toBeGreaterThanOrEqual(estimate(sample));
    }
  });
});
