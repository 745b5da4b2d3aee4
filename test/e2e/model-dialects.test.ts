import { afterEach, describe, expect, it } from 'vitest';
import { type ChatRequest, reply } from '../support/fake-openai.js';
import { dialect, refuses } from '../support/fake-openai-dialects.js';
import { type Harness, type HarnessOptions, startHarness } from './harness.js';

/**
 * Each quirk of a real OpenAI-compatible server, written by hand in the fake model server, through the real
 * bot: the run must end as it does with OpenAI's own answer.
 */

const toolMessages = (request: ChatRequest | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === 'tool').map((m) => m.content);
const assistantCalls = (request: ChatRequest | undefined) =>
  (request?.messages ?? []).filter((m) => m.role === 'assistant').flatMap((m) => m.tool_calls ?? []);

let h: Harness;
afterEach(async () => {
  await h?.close();
});

/** A harness whose model client retries as production does (twice), so a retry that should not happen shows. */
const startWithRetries = (options: HarnessOptions = {}) => startHarness({ ...options, modelRetries: 2 });

async function approveCards(count: number): Promise<void> {
  const cards = await h.waitForCards(count);
  for (const card of cards.slice(0, count)) await h.click(card, 'approve', 'U2');
}

describe('tool calls assembled as servers send them (streamed)', () => {
  it('Mistral: a whole call without index or type, finish_reason and usage on the same chunk', async () => {
    h = await startHarness();
    h.model.enqueue(dialect.noIndexWholeCall('list_notes', {}), reply.text('No notes yet.'));
    await h.mention('which notes?');
    await h.waitForText((t) => t === 'No notes yet.');
    expect(toolMessages(h.model.requests[1])).toEqual(['There are no notes.']);
    expect(assistantCalls(h.model.requests[1])).toMatchObject([
      { id: 'Ab3De5Gh7', function: { name: 'list_notes', arguments: '{}' } },
    ]);
  });

  it('LiteLLM: a continuation with id "", type "FUNCTION" and name "null" is not appended to the name', async () => {
    h = await startHarness();
    h.model.enqueue(dialect.nullNameContinuation('list_notes', '{"pa', 'th": "."}'), reply.text('Listed.'));
    await h.mention('list them');
    await h.waitForText((t) => t === 'Listed.');
    expect(assistantCalls(h.model.requests[1])).toMatchObject([
      { id: 'call-lite-1', function: { name: 'list_notes', arguments: '{"path": "."}' } },
    ]);
    expect(h.texts().some((t) => t.includes('list_notesnull'))).toBe(false);
  });

  it('Ollama: parallel calls all at index 0 with distinct ids are separate calls', async () => {
    h = await startHarness();
    h.model.enqueue(
      dialect.parallelAtIndexZero([
        { name: 'create_note', args: { text: 'first' } },
        { name: 'create_note', args: { text: 'second' } },
      ]),
      reply.text('Both added.'),
    );
    await h.mention('add two notes');
    await approveCards(2);
    await h.waitForText((t) => t === 'Both added.');
    expect(assistantCalls(h.model.requests[1]).map((c) => [c.id, c.function.arguments])).toEqual([
      ['call_oll0', '{"text":"first"}'],
      ['call_oll1', '{"text":"second"}'],
    ]);
    expect(toolMessages(h.model.requests[1])).toEqual(['Created note #1.', 'Created note #2.']);
  });

  it('Alibaba: continuations with id "", a trailing empty fragment, usage only in a last chunk without choices', async () => {
    h = await startHarness();
    h.model.enqueue(dialect.emptyIdContinuation('create_note', '{"text": "qw', 'en"}'), reply.text('Added.'));
    await h.mention('add a note');
    await approveCards(1);
    await h.waitForText((t) => t === 'Added.');
    expect(assistantCalls(h.model.requests[1])).toMatchObject([
      { id: 'call_qw1', function: { name: 'create_note', arguments: '{"text": "qwen"}' } },
    ]);
    expect(toolMessages(h.model.requests[1])).toEqual(['Created note #1.']);
  });

  it('GLM on Mistral: an id-less continuation with name "" carries the whole arguments', async () => {
    h = await startHarness();
    h.model.enqueue(dialect.emptyNameContinuation('create_note', { text: 'glm' }), reply.text('Added.'));
    await h.mention('add a note');
    await approveCards(1);
    await h.waitForText((t) => t === 'Added.');
    expect(assistantCalls(h.model.requests[1])).toMatchObject([
      { id: 'chatcmpl-tool-1', function: { name: 'create_note', arguments: '{"text":"glm"}' } },
    ]);
  });

  it('an Anthropic gateway: text, then the only call at index 1', async () => {
    h = await startHarness();
    h.model.enqueue(dialect.textThenCallAtIndexOne('Reading it.', 'list_notes', {}), reply.text('Read.'));
    await h.mention('read it');
    await h.waitForText((t) => t.endsWith('Read.'));
    // One streamed message: the text, the call as a task, the answer.
    expect(h.texts()).toEqual(['Reading it.\n\nRead.']);
    expect(assistantCalls(h.model.requests[1])).toMatchObject([{ id: 'toolu_01' }]);
  });
});

describe('what the server needs back is sent back', () => {
  it('Gemini 3 (streamed): the tool call’s thought_signature goes back verbatim, so the next request is accepted', async () => {
    h = await startHarness();
    const signature = 'c2lnbmF0dXJlLW9mLWEtdGhvdWdodA==';
    h.model.setHandler((request, index) => {
      if (index === 0) return dialect.signedCall('list_notes', {}, signature);
      if (refuses.callsWithoutSignature(request)) {
        return dialect.arrayErrorBody('Function call is missing a thought_signature in functionCall parts.');
      }
      return reply.text('Nothing there.');
    });
    await h.mention('notes?');
    await h.waitForText((t) => t === 'Nothing there.');
    expect(assistantCalls(h.model.requests[1])).toEqual([
      {
        extra_content: { google: { thought_signature: signature } },
        id: 'function-call-1',
        type: 'function',
        function: { name: 'list_notes', arguments: '{}' },
      },
    ]);
    expect(h.texts().join('\n')).not.toContain(signature);
  });

  it('DeepSeek thinking mode (streamed): reasoning_content goes back with the tool-call message, never to Slack', async () => {
    h = await startHarness();
    h.model.setHandler((request, index) => {
      if (index === 0)
        return dialect.reasoningThenCall(['The user wants ', 'a note.'], 'create_note', { text: 'ds' });
      if (refuses.callsWithoutReasoning(request)) {
        return reply.error(400, {
          error: {
            message: 'Missing `reasoning_content` field in the assistant message at message index 2.',
          },
        });
      }
      return reply.text('Saved it.');
    });
    await h.mention('note ds');
    await approveCards(1);
    await h.waitForText((t) => t === 'Saved it.');
    const sent = h.model.requests[1]?.messages.find((m) => m.role === 'assistant');
    expect(sent).toMatchObject({ reasoning_content: 'The user wants a note.', content: null });
    expect(h.texts().join('\n')).not.toContain('The user wants');
  });

  it('DeepSeek thinking mode (not streamed): content "" with reasoning_content and indexed tool calls', async () => {
    h = await startHarness({ env: { OPENAI_STREAM: 'false' } });
    h.model.setHandler((request, index) => {
      if (index === 0) {
        return dialect.completion({
          content: '',
          reasoning_content: 'A note, then.',
          tool_calls: [
            {
              index: 0,
              id: 'call_00_j',
              type: 'function',
              function: { name: 'create_note', arguments: '{"text":"j"}' },
            },
          ],
        });
      }
      if (refuses.callsWithoutReasoning(request)) return reply.error(400);
      return reply.text('Saved.');
    });
    await h.mention('note j');
    await approveCards(1);
    await h.waitForText((t) => t === 'Saved.');
    expect(h.model.requests[1]?.messages.find((m) => m.role === 'assistant')).toMatchObject({
      reasoning_content: 'A note, then.',
    });
  });

  it('Gemini (not streamed): a tool call with id "" and no type, no content key; extra_content goes back', async () => {
    h = await startHarness({ env: { OPENAI_STREAM: 'false' } });
    h.model.setHandler((request, index) => {
      if (index === 0) {
        return dialect.completion({
          tool_calls: [
            {
              id: '',
              function: { name: 'list_notes', arguments: '{}' },
              extra_content: { google: { thought_signature: 'sig-j' } },
            },
          ],
        });
      }
      if (refuses.callsWithoutSignature(request)) return dialect.arrayErrorBody('missing thought_signature');
      return reply.text('Noon.');
    });
    await h.mention('time?');
    await h.waitForText((t) => t === 'Noon.');
    const [call] = assistantCalls(h.model.requests[1]);
    expect(call?.id).not.toBe('');
    expect(call).toMatchObject({ extra_content: { google: { thought_signature: 'sig-j' } } });
    expect(h.model.requests[1]?.messages.find((m) => m.role === 'tool')?.tool_call_id).toBe(call?.id);
  });
});

describe('tool-call arguments sent as a JSON object (Hugging Face TGI 2.x)', () => {
  it('streamed: the object is accepted, the card shows it, and the call goes back as a JSON string', async () => {
    h = await startHarness();
    h.model.enqueue(dialect.objectArguments('create_note', { text: 'from tgi' }), reply.text('Saved.'));
    await h.mention('note from tgi');
    const [card] = await h.waitForCards(1);
    expect(JSON.stringify(card?.params.blocks)).toContain('from tgi');
    await approveCards(1);
    await h.waitForText((t) => t === 'Saved.');
    expect(toolMessages(h.model.requests[1])).toEqual(['Created note #1.']);
    expect(assistantCalls(h.model.requests[1])).toMatchObject([
      { id: '0', function: { name: 'create_note', arguments: '{"text":"from tgi"}' } },
    ]);
  });

  it('not streamed: the object is accepted and the tool runs with it', async () => {
    h = await startHarness({ env: { OPENAI_STREAM: 'false' } });
    h.model.enqueue(
      dialect.completion({
        content: null,
        tool_calls: [
          {
            id: '0',
            type: 'function',
            function: { description: null, name: 'create_note', arguments: { text: 'unstreamed' } },
          },
        ],
      }),
      reply.text('Saved.'),
    );
    await h.mention('note unstreamed');
    await approveCards(1);
    await h.waitForText((t) => t === 'Saved.');
    expect(h.texts().some((t) => t.includes('could not read'))).toBe(false);
    expect(assistantCalls(h.model.requests[1])).toMatchObject([
      { function: { name: 'create_note', arguments: '{"text":"unstreamed"}' } },
    ]);
    expect(toolMessages(h.model.requests[1])).toEqual(['Created note #1.']);
  });
});

describe('adapting to what the server refuses, once', () => {
  it('vLLM (2024): a 400 naming stream_options → the same request without it, and never again; logged once', async () => {
    h = await startHarness();
    h.model.setHandler((request, index) => {
      if (refuses.streamOptions(request)) return dialect.strictRefusal('stream_options');
      return index <= 1 ? reply.toolCalls([{ name: 'list_notes', arguments: {} }]) : reply.text('All done.');
    });
    await h.mention('notes?');
    await h.waitForText((t) => t === 'All done.');
    expect(h.model.requests.map((r) => [r.stream, r.stream_options != null])).toEqual([
      [true, true],
      [true, false],
      [true, false],
    ]);
    const warnings = h.logs.filter((l) => l.includes('refuses stream_options'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('extra_forbidden');
    expect(warnings[0]).toContain('"level":"warn"');
  });

  it('llama.cpp: "Cannot use tools with stream" (500) → not retried, sent again unstreamed; tools are not streamed again', async () => {
    h = await startWithRetries();
    h.model.setHandler((request, index) => {
      if (request.stream === true && request.tools) return dialect.cannotStreamWithTools();
      return index <= 1
        ? reply.toolCalls([{ name: 'list_notes', arguments: {} }])
        : reply.text('Here you are.');
    });
    await h.mention('notes?');
    await h.waitForText((t) => t === 'Here you are.');
    expect(h.model.requests.map((r) => r.stream === true)).toEqual([true, false, false]);
    expect(h.logs.filter((l) => l.includes('cannot stream with tools'))).toHaveLength(1);
    expect(h.texts()).toEqual(['Here you are.']);
  });

  it('a server that refuses streaming with tools also unstreamed gets one accurate sentence, not "try again in a minute"', async () => {
    h = await startWithRetries();
    h.model.setHandler(() => dialect.cannotStreamWithTools());
    await h.mention('notes?');
    const said = await h.waitForText((t) => t.startsWith('The model service'));
    expect(said).toBe(
      'The model service refused this request (“Cannot use tools with stream”), so I could not answer.',
    );
    expect(h.model.requests.map((r) => r.stream === true)).toEqual([true, false]);
  });
});

describe('saying what really failed', () => {
  it('Groq: an `event: error` after HTTP 200 → the server’s reason in the thread and the log, no retry', async () => {
    h = await startWithRetries();
    h.model.setHandler(() =>
      dialect.errorEventInStream(
        'Tool call validation failed: parameters for tool create_note did not match schema',
      ),
    );
    await h.mention('add a note');
    const said = await h.waitForText((t) => t.startsWith('The model service'));
    expect(said).toBe(
      'The model service refused this request (“Tool call validation failed: parameters for tool create_note did not match schema”), so I could not answer.',
    );
    await h.bot.conversations.idle();
    expect(h.model.requests).toHaveLength(1);
    const logged = h.logs.find((l) => l.includes('model call failed')) ?? '';
    expect(logged).toContain('tool_use_failed');
    expect(logged).toContain('inside the stream');
    expect(logged).not.toContain('undefined');
  });

  it('OpenRouter: an `error` object in a chunk after HTTP 200 → refused, with the server’s words', async () => {
    h = await startWithRetries();
    h.model.setHandler(() => dialect.errorInChunk(400, 'Token limit reached'));
    await h.mention('hello');
    const said = await h.waitForText((t) => t.startsWith('The model service'));
    expect(said).toBe(
      'The model service refused this request (“Token limit reached”), so I could not answer.',
    );
    expect(h.model.requests).toHaveLength(1);
  });

  it('an error body without the {"error": …} envelope is read: its message reaches the thread and the log', async () => {
    h = await startWithRetries();
    h.model.setHandler(() =>
      reply.error(400, {
        object: 'error',
        message:
          '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set. Restart it.',
        type: 'BadRequestError',
        param: 'messages',
        code: 400,
      }),
    );
    await h.mention('hello');
    const said = await h.waitForText((t) => t.startsWith('The model service'));
    expect(said).toBe(
      'The model service refused this request (“"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set”), so I could not answer.',
    );
    expect(h.logs.find((l) => l.includes('model call failed'))).toContain('param messages');
  });

  it('a message the model cannot read even alone (vLLM: longer than its context) is told as such, once', async () => {
    h = await startWithRetries();
    h.model.setHandler(() =>
      reply.error(400, {
        object: 'error',
        message: "This model's maximum context length is 4096 tokens. However, you requested 9000 tokens.",
        type: 'BadRequestError',
        param: 'messages',
        code: 400,
      }),
    );
    await h.mention('hello');
    const said = await h.waitForText((t) => t.startsWith('This conversation'));
    expect(said).toBe(
      'This conversation is longer than the model can read, even with its older part summarised, so I could not answer; please start a new thread.',
    );
    // Nothing older to summarise: the request is not sent again.
    expect(h.model.requests).toHaveLength(1);
  });

  it('a Gemini error body that is a JSON array is read', async () => {
    h = await startWithRetries();
    h.model.setHandler(() => dialect.arrayErrorBody('API key expired. Please renew the API key.'));
    await h.mention('hello');
    const said = await h.waitForText((t) => t.startsWith('The model service'));
    expect(said).toBe('The model service refused this request (“API key expired”), so I could not answer.');
  });

  it('refused credentials (401) point to the settings and keep the server’s words out of the thread', async () => {
    h = await startWithRetries();
    h.model.setHandler(() =>
      reply.error(401, { error: { message: 'Incorrect API key provided: sk-te****st.' } }),
    );
    await h.mention('hello');
    const said = await h.waitForText((t) => t.startsWith('The model service'));
    expect(said).toBe(
      'The model service refused this request (check the bot’s model settings), so I could not answer.',
    );
    expect(h.model.requests).toHaveLength(1);
  });
});
