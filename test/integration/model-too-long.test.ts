import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelError } from '../../src/agent/model.js';
import { createOpenAIModel } from '../../src/model/openai/openai-client.js';
import { contextLengthExceeded, type FakeOpenAI, reply, startFakeOpenAI } from '../support/fake-openai.js';

/** How each server words a request longer than its context, as it sends it. */
const WORDINGS: { server: string; status: number; body: string; contextTokens: number | undefined }[] = [
  {
    server: 'OpenAI',
    status: 400,
    body: JSON.stringify(contextLengthExceeded(6000, 6543)),
    contextTokens: 6000,
  },
  {
    server: 'vLLM (older)',
    status: 400,
    body: JSON.stringify({
      object: 'error',
      message:
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (4000 in the messages, 1000 in the completion). Please reduce the length of the messages or completion.",
      type: 'BadRequestError',
      param: null,
      code: 400,
    }),
    contextTokens: 4096,
  },
  {
    server: 'vLLM',
    status: 400,
    body: JSON.stringify({
      error: {
        message:
          'The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure that `max_model_len` is no smaller than the number of text tokens.',
        type: 'BadRequestError',
        param: null,
        code: 400,
      },
    }),
    contextTokens: 8192,
  },
  {
    server: 'llama.cpp',
    status: 400,
    body: JSON.stringify({
      error: {
        code: 400,
        message: 'the request exceeds the available context size, try increasing it',
        type: 'exceed_context_size_error',
        n_prompt_tokens: 5000,
        n_ctx: 4096,
      },
    }),
    contextTokens: 4096,
  },
  {
    server: 'Mistral',
    status: 400,
    body: JSON.stringify({
      object: 'error',
      message:
        'Prompt contains 40000 tokens and 0 draft tokens, too large for model with 32768 maximum context length',
      type: 'invalid_request_message_error',
      param: null,
      code: '3051',
    }),
    contextTokens: 32768,
  },
  {
    server: 'Gemini',
    status: 400,
    body: JSON.stringify([
      {
        error: {
          code: 400,
          message: 'The input token count (1200000) exceeds the maximum number of tokens allowed (1048576).',
          status: 'INVALID_ARGUMENT',
        },
      },
    ]),
    contextTokens: 1048576,
  },
  {
    server: 'DeepSeek',
    status: 400,
    body: JSON.stringify({
      error: {
        message:
          "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens (70000 in the messages, 0 in the completion). Please reduce the length of the messages or completion.",
        type: 'invalid_request_error',
        param: null,
        code: 'invalid_request_error',
      },
    }),
    contextTokens: 65536,
  },
];

describe('a request longer than the model context, as each server says it', () => {
  let model: FakeOpenAI;
  beforeAll(async () => {
    model = await startFakeOpenAI();
  });
  afterAll(() => model.close());

  const client = () =>
    createOpenAIModel({
      apiKey: 'sk-test',
      baseURL: model.baseURL,
      model: 'm',
      maxRetries: 0,
      systemPrompt: 's',
    });
  const failure = async () =>
    client()
      .complete({ messages: [{ role: 'user', content: 'hi' }], tools: [] })
      .then(
        () => undefined,
        (error: unknown) => error,
      );

  for (const wording of WORDINGS) {
    it(`${wording.server}: too long, with the context it names`, async () => {
      model.enqueue(reply.raw(wording.status, wording.body));
      const error = await failure();
      expect(error).toBeInstanceOf(ModelError);
      expect(error).toMatchObject({ failure: 'too_long', contextTokens: wording.contextTokens });
    });
  }

  it('other refusals stay refusals', async () => {
    model.enqueue(
      reply.error(400, { error: { message: "Invalid value for 'tools'", type: 'invalid_request_error' } }),
    );
    expect(await failure()).toMatchObject({ failure: 'rejected' });
  });
});
