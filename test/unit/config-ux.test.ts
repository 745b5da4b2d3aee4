import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { DEFAULT_SUGGESTED_PROMPTS } from '../../src/config-suggested-prompts.js';

const base = { SLACK_BOT_TOKEN: 'xoxb-1', SLACK_SIGNING_SECRET: 's', OPENAI_API_KEY: 'sk-1' };

describe('configuration of what people see', () => {
  it('streams, reads 20 earlier thread messages and offers the default prompts unless told otherwise', () => {
    const result = loadConfig(base);
    if (!result.ok) throw new Error(result.problems.join());
    expect(result.config.openai.stream).toBe(true);
    expect(result.config.threadContextMessages).toBe(20);
    expect(result.config.suggestedPrompts).toEqual(DEFAULT_SUGGESTED_PROMPTS);
  });

  it('reads OPENAI_STREAM, THREAD_CONTEXT_MESSAGES and SUGGESTED_PROMPTS', () => {
    const prompts = [{ title: 'Deploys', message: 'How did the last deploy go?' }];
    const result = loadConfig({
      ...base,
      OPENAI_STREAM: 'false',
      THREAD_CONTEXT_MESSAGES: '0',
      SUGGESTED_PROMPTS: JSON.stringify(prompts),
    });
    if (!result.ok) throw new Error(result.problems.join());
    expect(result.config.openai.stream).toBe(false);
    expect(result.config.threadContextMessages).toBe(0);
    expect(result.config.suggestedPrompts).toEqual(prompts);
  });

  it('names each bad value', () => {
    const five = Array.from({ length: 5 }, (_, i) => ({ title: `t${i}`, message: `m${i}` }));
    for (const [name, value] of [
      ['OPENAI_STREAM', 'maybe'],
      ['THREAD_CONTEXT_MESSAGES', '-1'],
      ['SUGGESTED_PROMPTS', 'not json'],
      ['SUGGESTED_PROMPTS', JSON.stringify(five)],
    ] as const) {
      const result = loadConfig({ ...base, [name]: value });
      expect(result.ok ? [] : result.problems.join('\n')).toContain(name);
    }
  });
});
