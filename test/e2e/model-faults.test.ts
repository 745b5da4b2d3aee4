import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatModel } from '../../src/agent/model.js';
import { createOpenAIModel } from '../../src/model/openai/openai-client.js';
import { SYSTEM_PROMPT } from '../../src/slack/system-prompt.js';
import { type ModelReply, reply } from '../support/fake-openai.js';
import { type Harness, startHarness } from './harness.js';
import { type ProcessFixture, startProcessFixture } from './process-fixture.js';

/** The production client settings, with a short timeout so a hung request fails fast. */
const RETRIES = 2;

const faults: { name: string; fault: ModelReply; sentence: string; attempts: number }[] = [
  {
    name: '429 with Retry-After',
    fault: reply.error(429, undefined, { 'retry-after': '0' }),
    sentence: 'The model service is rate limiting requests right now',
    attempts: RETRIES + 1,
  },
  {
    name: '500',
    fault: reply.error(500),
    sentence: 'The model service is unavailable right now',
    attempts: RETRIES + 1,
  },
  {
    name: 'a hung request (timeout)',
    fault: reply.hang(),
    sentence: 'The model service did not answer in time',
    attempts: RETRIES + 1,
  },
  {
    name: 'a malformed body',
    fault: reply.raw(200, '{"id": "chatcmpl-1", "choices": [{"message": '),
    sentence: 'The model service sent a response I could not read',
    attempts: 1,
  },
  {
    name: 'an empty choices array',
    fault: reply.emptyChoices(),
    sentence: 'The model service sent a response I could not read',
    attempts: 1,
  },
];

describe('model API faults', () => {
  let h: Harness;
  beforeEach(async () => {
    let client: ChatModel | undefined;
    const model: ChatModel = {
      complete: (request) => {
        if (!client) throw new Error('model client not ready');
        return client.complete(request);
      },
    };
    h = await startHarness({ overrides: { model } });
    client = createOpenAIModel({
      apiKey: 'sk-test',
      baseURL: h.model.baseURL,
      model: 'gpt-test',
      systemPrompt: SYSTEM_PROMPT,
      maxRetries: RETRIES,
      timeoutMs: 1000,
    });
  });
  afterEach(async () => {
    await h.close();
  });

  it.each(faults)(
    '$name: bounded retries, one sentence in the thread, the next message works',
    async ({ fault, sentence, attempts }) => {
      h.model.setHandler(() => fault);
      const ts = await h.mention('what time is it?');
      const said = await h.waitForText((text) => text.startsWith(sentence));
      expect(said).toMatch(/try again/);
      await h.bot.conversations.idle();
      expect(h.model.requests).toHaveLength(attempts);
      expect(h.texts()).toHaveLength(1);

      h.model.setHandler(undefined);
      h.model.enqueue(reply.text('It is noon.'));
      await h.message('and now?', { threadTs: ts });
      await h.waitForText((text) => text === 'It is noon.');
      const next = h.model.requests.at(-1)?.messages.filter((m) => m.role === 'user');
      expect(next?.map((m) => m.content)).toEqual(['what time is it?', 'and now?']);
    },
  );

  it('a fault after an approved call keeps the call and its output; the next message carries on from them', async () => {
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'kept' } }]));
    const ts = await h.mention('add a note kept');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    h.model.setHandler(() => reply.error(503));
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text.startsWith('The model service is unavailable right now'));

    h.model.setHandler(undefined);
    h.model.enqueue(reply.text('The note is saved.'));
    await h.message('did it work?', { threadTs: ts });
    await h.waitForText((text) => text === 'The note is saved.');
    const messages = h.model.requests.at(-1)?.messages ?? [];
    expect(messages.filter((m) => m.role === 'tool').map((m) => m.content)).toEqual(['Created note #1.']);
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual([
      'add a note kept',
      'did it work?',
    ]);
  });
});

describe('model timeout setting', () => {
  let f: ProcessFixture;
  afterEach(async () => {
    await f.close();
  });

  it('OPENAI_TIMEOUT_MS bounds a hung model request in the running bot', async () => {
    f = await startProcessFixture();
    f.model.setHandler(() => reply.hang());
    // Long enough that each attempt reaches the fake model server even on a busy machine (a shorter limit can
    // end an attempt before its request arrives, and the count below would miss it).
    const bot = await f.start({ OPENAI_TIMEOUT_MS: '1000' });
    await f.mention(bot, 'hello?');
    await f.waitForText((text) => text.startsWith('The model service did not answer in time'));
    expect(f.model.requests).toHaveLength(RETRIES + 1);
  });
});
