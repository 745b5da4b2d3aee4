import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { CURRENT_RUN_STATE_VERSION } from '../../src/agent/run-state.js';
import { defineTool } from '../../src/agent/tool.js';
import { QUEUED_NOTICE } from '../../src/conversations/conversation-service.js';
import { reply } from '../support/fake-openai.js';
import { rows } from './db-rows.js';
import { rejectWithModal } from './decision-modals.js';
import { type Harness, startHarness } from './harness.js';

const toolMessages = (h: Harness, request: number) =>
  h.model.requests[request]?.messages
    .filter((m) => m.role === 'tool')
    .map((m) => [m.tool_call_id, m.content]) ?? [];

/** A tool that needs approval only for large amounts: its predicate must never see unparseable arguments. */
const transfer = defineTool({
  name: 'transfer_credits',
  description: 'Moves credits.',
  parameters: z.object({ amount: z.number().int().positive() }),
  needsApproval: ({ amount }) => amount > 100,
  execute: ({ amount }) => `Moved ${amount} credits.`,
});

const failing = defineTool({
  name: 'lookup_customer',
  description: 'Looks a customer up.',
  parameters: z.object({ id: z.number() }),
  execute: () => {
    throw new Error(`connection to crm.internal:5432 refused; ${'detail '.repeat(120)}END-OF-DETAIL`);
  },
});

describe('runner semantics through Slack', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('fails closed on bad arguments: not JSON, not an object, or invalid for the schema all need approval, and approving them runs nothing', async () => {
    h = await startHarness({ overrides: { tools: (builtIn) => [...builtIn, transfer] } });
    h.model.enqueue(
      reply.toolCalls([
        { name: 'create_note', arguments: '{"text": "unterminated', id: 'call_json' },
        { name: 'create_note', arguments: '["a", "list"]', id: 'call_array' },
        { name: 'create_note', arguments: { text: 42 }, id: 'call_schema' },
        // The predicate would say "no approval" for a small amount, but these arguments do not parse.
        { name: 'transfer_credits', arguments: { amount: 'five' }, id: 'call_predicate' },
      ]),
      reply.text('None of those worked.'),
    );
    await h.mention('do odd things');
    const cards = await h.waitForCards(4);
    expect(h.model.requests).toHaveLength(1);
    for (const card of cards) await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'None of those worked.');
    expect(toolMessages(h, 1)).toEqual([
      ['call_json', expect.stringMatching(/^The arguments are not valid JSON \(/)],
      ['call_array', 'The arguments must be a JSON object.'],
      ['call_schema', expect.stringMatching(/^The arguments are invalid: text: /)],
      ['call_predicate', expect.stringMatching(/^The arguments are invalid: amount: /)],
    ]);
    expect(await rows(h.database, 'SELECT COUNT(*) AS n FROM notes')).toEqual([{ n: 0 }]);
    expect(
      await rows(h.database, "SELECT COUNT(*) AS n FROM audit_events WHERE kind = 'tool.started'"),
    ).toEqual([{ n: 0 }]);
  });

  it('an unknown tool gets an error output naming the available tools, and the run goes on', async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([{ name: 'launch_rockets', arguments: {}, id: 'call_x' }]),
      reply.text('I cannot launch rockets.'),
    );
    await h.mention('launch the rockets');
    await h.waitForText((text) => text === 'I cannot launch rockets.');
    expect(toolMessages(h, 1)).toEqual([
      [
        'call_x',
        'Unknown tool "launch_rockets". Available tools: get_current_time, list_notes, create_note, delete_note, post_message.',
      ],
    ]);
    expect(h.cards()).toHaveLength(0);
  });

  it('a tool that throws gives the model a short error; the whole error goes to the log', async () => {
    h = await startHarness({ overrides: { tools: (builtIn) => [...builtIn, failing] } });
    h.model.enqueue(
      reply.toolCalls([{ name: 'lookup_customer', arguments: { id: 104 }, id: 'call_crm' }]),
      reply.text('The CRM is down.'),
    );
    await h.mention('look up customer 104');
    await h.waitForText((text) => text === 'The CRM is down.');
    const [[, output]] = toolMessages(h, 1) as [[string, string]];
    expect(output).toMatch(
      /^The tool lookup_customer failed: Error: connection to crm.internal:5432 refused/,
    );
    expect(output.length).toBeLessThanOrEqual(400);
    expect(output).not.toContain('END-OF-DETAIL');
    const logged = h.logs.find((line) => line.includes('"msg":"tool failed"'));
    expect(logged).toContain('END-OF-DETAIL');
    expect(logged).toContain('"callId":"call_crm"');
  });

  it('several approval rounds in one run: a second card after the first approval, then the answer', async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'round one' } }]),
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'round two' } }]),
      reply.text('Both rounds done.'),
    );
    await h.mention('two rounds please');
    const [first] = await h.waitForCards(1);
    if (!first) throw new Error('no card');
    await h.click(first, 'approve', 'U2');
    const [, second] = await h.waitForCards(2);
    if (!second) throw new Error('no second card');
    expect(JSON.stringify(second.params.blocks)).toContain('round two');
    expect(h.texts()).toEqual([]);
    await h.click(second, 'approve', 'U2');
    await h.waitForText((text) => text === 'Both rounds done.');
    expect(h.model.requests).toHaveLength(3);
    expect(await rows(h.database, 'SELECT text FROM notes ORDER BY id')).toEqual([
      { text: 'round one' },
      { text: 'round two' },
    ]);
    expect(
      await rows(
        h.database,
        "SELECT status, schema_version, json_extract(state, '$.schemaVersion') AS v FROM runs",
      ),
    ).toEqual([
      { status: 'completed', schema_version: CURRENT_RUN_STATE_VERSION, v: CURRENT_RUN_STATE_VERSION },
    ]);
  });

  it('partial resolution: one of two cards decided leaves the run paused; one model call after the last, with every output', async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([
        { name: 'create_note', arguments: { text: 'keep' }, id: 'call_keep' },
        { name: 'create_note', arguments: { text: 'drop' }, id: 'call_drop' },
      ]),
      reply.text('Kept one, dropped one.'),
    );
    await h.mention('keep and drop');
    const [keep, drop] = await h.waitForCards(2);
    if (!keep || !drop) throw new Error('cards missing');
    await rejectWithModal(h, drop, 'U2', 'not that one');
    await h.slack.waitForCall('chat.update');
    await h.bot.conversations.idle();
    expect(h.model.requests).toHaveLength(1);
    expect(await rows(h.database, 'SELECT status FROM runs')).toEqual([{ status: 'paused' }]);

    await h.click(keep, 'approve', 'U3');
    await h.waitForText((text) => text === 'Kept one, dropped one.');
    expect(h.model.requests).toHaveLength(2);
    expect(toolMessages(h, 1)).toEqual([
      ['call_keep', 'Created note #1.'],
      ['call_drop', 'Tool execution was not approved. Rejected by <@U2>, who said: "not that one"'],
    ]);
  });

  it('messages sent while a run is paused wait, are acknowledged in the thread, and are answered in order afterwards', async () => {
    h = await startHarness();
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'first' } }]));
    const ts = await h.mention('add first');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.message('second question', { threadTs: ts, user: 'U3' });
    await h.message('third question', { threadTs: ts });
    await h.bot.conversations.idle();
    expect(h.texts()).toEqual([QUEUED_NOTICE, QUEUED_NOTICE]);
    expect(h.model.requests).toHaveLength(1);

    h.model.enqueue(reply.text('First done.'), reply.text('Answer two.'), reply.text('Answer three.'));
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Answer three.');
    expect(h.texts()).toEqual([QUEUED_NOTICE, QUEUED_NOTICE, 'First done.', 'Answer two.', 'Answer three.']);
    const lastUser = (i: number) =>
      h.model.requests[i]?.messages.filter((m) => m.role === 'user').at(-1)?.content;
    expect([lastUser(2), lastUser(3)]).toEqual(['second question', 'third question']);
    const posts = h.slack.callsTo('chat.postMessage');
    expect(posts.every((post) => post.params.thread_ts === ts)).toBe(true);
  });
});
