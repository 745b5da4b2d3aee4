import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/agent/tool.js';
import { reply } from '../support/fake-openai.js';
import type { SlackCall } from '../support/fake-slack.js';
import { isRecord } from '../support/json-value.js';
import { rows } from './db-rows.js';
import { type Harness, startHarness } from './harness.js';

interface SeenTask {
  method: string;
  index: number;
  id: string;
  title: string;
  status: string;
  output?: string;
}

const STREAM_METHODS = ['chat.startStream', 'chat.appendStream', 'chat.stopStream'];

/** Every `task_update` chunk the bot streamed, in the order Slack received them. */
function tasks(h: Harness): SeenTask[] {
  const seen: SeenTask[] = [];
  h.slack.calls.forEach((call: SlackCall, index) => {
    if (!STREAM_METHODS.includes(call.method) || !Array.isArray(call.params.chunks)) return;
    for (const chunk of call.params.chunks) {
      if (!isRecord(chunk) || chunk.type !== 'task_update') continue;
      seen.push({
        method: call.method,
        index,
        id: String(chunk.id),
        title: String(chunk.title),
        status: String(chunk.status),
        ...(typeof chunk.output === 'string' ? { output: chunk.output } : {}),
      });
    }
  });
  return seen;
}

/** The ids the model gave its tool calls, in order, read back from the next request. */
function callIds(h: Harness, request: number): string[] {
  const assistant = h.model.requests[request]?.messages.find((m) => m.role === 'assistant');
  return (assistant?.tool_calls ?? []).map((call) => call.id);
}

describe('tool calls as tasks in streamed answers', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('shows each free call as one task, in progress then complete with its output, all before the stream stops', async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([
        { name: 'list_notes', arguments: {} },
        { name: 'get_current_time', arguments: { timeZone: 'UTC' } },
      ]),
      reply.text('No notes, and it is late.'),
    );
    await h.mention('notes and time?');
    await h.waitForText((text) => text === 'No notes, and it is late.');
    const [notesId, timeId] = callIds(h, 1);
    expect(tasks(h).map((t) => [t.id, t.title, t.status])).toEqual([
      [notesId, 'list_notes', 'in_progress'],
      [notesId, 'list_notes', 'complete'],
      [timeId, 'get_current_time', 'in_progress'],
      [timeId, 'get_current_time', 'complete'],
    ]);
    const seen = tasks(h);
    expect(seen[1]?.output).toBe('There are no notes.');
    expect(seen[3]?.output).toContain('(UTC)');
    // One message: the tasks first (the stream starts with one), then the answer; nothing after the stop.
    expect(seen[0]?.method).toBe('chat.startStream');
    const stops = h.slack.calls.flatMap((c, i) => (c.method === 'chat.stopStream' ? [i] : []));
    expect(stops).toHaveLength(1);
    expect(seen.every((task) => task.index < (stops[0] ?? 0))).toBe(true);
    expect(h.messages().map((m) => m.via)).toEqual(['stream']);
  });

  it('never shows arguments or credentials, and cuts an output to 256 characters', async () => {
    const echo = defineTool({
      name: 'lookup_account',
      description: 'Looks an account up.',
      parameters: z.object({ account: z.string() }),
      needsApproval: false,
      execute: async () => `token xoxb-1234567890-abcdefghij found; ${'details '.repeat(100)}`,
    });
    h = await startHarness({ overrides: { tools: (builtIn) => [...builtIn, echo] } });
    h.model.enqueue(
      reply.toolCalls([{ name: 'lookup_account', arguments: { account: 'ARGUMENT-VALUE-42' } }]),
      reply.text('Found it.'),
    );
    await h.mention('look up the account');
    await h.waitForText((text) => text === 'Found it.');
    const done = tasks(h).find((t) => t.status === 'complete');
    expect(done?.output?.length).toBeLessThanOrEqual(256);
    expect(done?.output).toContain('[redacted]');
    const streamed = JSON.stringify(h.slack.calls.filter((c) => STREAM_METHODS.includes(c.method)));
    expect(streamed).not.toContain('ARGUMENT-VALUE-42');
    expect(streamed).not.toContain('xoxb-1234567890');
  });

  it('neutralises what a tool answers: no broadcast, group mention or disguised link is live in a task', async () => {
    const hostile = defineTool({
      name: 'fetch_page',
      description: 'Fetches a page.',
      parameters: z.object({ page: z.number() }),
      needsApproval: false,
      execute: async ({ page }) =>
        page === 1
          ? 'Hi <!channel> <!everyone> <!here> <!subteam^S1> see <https://evil.example|click> and [docs](https://evil.example/x)'
          : '<!here> '.repeat(60),
    });
    h = await startHarness({ overrides: { tools: (builtIn) => [...builtIn, hostile] } });
    h.model.enqueue(
      reply.toolCalls([
        { name: 'fetch_page', arguments: { page: 1 } },
        { name: 'fetch_page', arguments: { page: 2 } },
      ]),
      reply.text('Fetched.'),
    );
    await h.mention('fetch the pages');
    await h.waitForText((text) => text === 'Fetched.');
    const [first, second] = tasks(h).filter((t) => t.status === 'complete');
    // Every field of every task chunk Slack received: nothing that Slack would turn into a mention or a link.
    const fields = h.slack.calls
      .filter((c) => STREAM_METHODS.includes(c.method) && Array.isArray(c.params.chunks))
      .flatMap((c) =>
        (c.params.chunks as unknown[]).filter((chunk) => isRecord(chunk) && chunk.type === 'task_update'),
      )
      .flatMap((chunk) => Object.values(chunk as Record<string, unknown>).map(String));
    expect(fields.length).toBeGreaterThan(0);
    for (const field of fields) {
      expect(field).not.toMatch(/<[!@#]|<https?:|\]\(/);
    }
    expect(first?.output).toContain('&lt;!channel&gt;');
    expect(first?.output).toContain('&lt;!subteam^S1&gt;');
    expect(first?.output).toContain('&lt;https://evil.example|click&gt;');
    expect(first?.output).toContain('docs (https://evil.example/x)');
    // Escaping lengthens the output: it is still within Slack's limit, and never cut inside an escape.
    expect(second?.output?.length).toBeLessThanOrEqual(256);
    expect(second?.output).toMatch(/&gt;…$/);
  });

  it('a call that needs approval is a pending task naming the approvers, then runs in the answer after the decision', async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'milk' } }]),
      reply.text('Added.'),
    );
    await h.mention('add a note milk');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const id = (await rows(h.database, 'select call_id from approvals'))[0]?.call_id;
    const pending = tasks(h);
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ id, title: 'create_note', status: 'pending' });
    expect(pending[0]?.output).toMatch(/^Waiting for approval by /);
    // The pending task is in the thread, its stream stopped, before the card.
    const methods = h.slack.calls.map((c) => c.method);
    expect(methods.indexOf('chat.stopStream')).toBeLessThan(methods.indexOf('chat.postMessage'));

    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Added.');
    expect(tasks(h).map((t) => [t.id, t.status, t.output ?? ''])).toEqual([
      [pending[0]?.id, 'pending', pending[0]?.output],
      [pending[0]?.id, 'in_progress', ''],
      [pending[0]?.id, 'complete', 'Created note #1.'],
    ]);
  });

  it('a failing tool is a task in error with its short failure', async () => {
    h = await startHarness();
    h.model.enqueue(
      reply.toolCalls([{ name: 'get_current_time', arguments: { timeZone: 'Nowhere/Atlantis' } }]),
      reply.text('That zone does not exist.'),
    );
    await h.mention('time in Atlantis?');
    await h.waitForText((text) => text === 'That zone does not exist.');
    const failed = tasks(h).at(-1);
    expect(failed?.status).toBe('error');
    expect(failed?.output).toMatch(/^The tool get_current_time failed/);
  });

  it('answers that are not streamed show no tasks (OPENAI_STREAM=false)', async () => {
    h = await startHarness({ env: { OPENAI_STREAM: 'false' } });
    h.model.enqueue(reply.toolCalls([{ name: 'list_notes', arguments: {} }]), reply.text('None.'));
    await h.mention('notes?');
    await h.waitForText((text) => text === 'None.');
    expect(tasks(h)).toHaveLength(0);
    expect(h.slack.callsTo('chat.startStream')).toHaveLength(0);
  });
});
