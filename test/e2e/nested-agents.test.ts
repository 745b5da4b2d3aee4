import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REJECTION_TEXT } from '../../src/approvals/approval.js';
import { reply } from '../support/fake-openai.js';
import { DATABASE_KINDS, type FreshDatabase, freshDatabase } from '../support/test-database.js';
import { rows } from './db-rows.js';
import { rejectWithModal } from './decision-modals.js';
import { approvalIdOf, type Harness, startHarness } from './harness.js';

const TRIAGE = {
  name: 'triage',
  description: 'Files bug reports as notes.',
  instructions: 'You triage bug reports. File each one as a note.',
  model: 'triage-model',
  tools: ['create_note'],
};

/** The conversation each model request carried, as role and text (or tool output), the system prompt first. */
const conversation = (h: Harness, request: number) =>
  h.model.requests[request]?.messages.map((m) => [m.role, m.content ?? null]) ?? [];

describe.each(DATABASE_KINDS)('an agent called as a tool, with approvals inside it, on %s', (kind) => {
  let dir: string;
  let database: FreshDatabase;
  const open: Harness[] = [];
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'agents-'));
    writeFileSync(join(dir, 'agents.json'), JSON.stringify({ agents: [TRIAGE] }));
    database = await freshDatabase(kind);
  });
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
    await database.drop();
    rmSync(dir, { recursive: true, force: true });
  });

  const start = async (env: Record<string, string> = {}) => {
    const h = await startHarness({
      database,
      env: { AGENTS_FILE: join(dir, 'agents.json'), ADMIN_USER_IDS: 'UADMIN', ...env },
    });
    open.push(h);
    return h;
  };
  const count = async (h: Harness, sql: string) => (await rows(h.database, sql))[0]?.n;
  const payloads = async (h: Harness, kind: string) =>
    (await rows(h.database, 'SELECT payload FROM audit_events WHERE kind = ? ORDER BY seq', kind)).map((r) =>
      JSON.parse(String(r.payload)),
    );

  /** The bot's agent hands the bug to triage, which asks to create a note: the whole run waits for a card. */
  const pausedInsideTriage = async (h: Harness) => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'triage', arguments: { input: 'Login fails on Safari' }, id: 'call_outer' }]),
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'Bug: login fails on Safari' }, id: 'n1' }]),
    );
    await h.mention('please file this bug: login fails on Safari');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(h.model.requests).toHaveLength(2);
    return card;
  };

  it('approve: the nested agent resumes with the output, and the outer agent gets its answer', async () => {
    const h = await start();
    const card = await pausedInsideTriage(h);
    // The nested agent asks its own model with its own instructions, and reads only the task it was given.
    expect(h.model.requests[1]?.model).toBe('triage-model');
    expect(conversation(h, 1)).toEqual([
      ['system', TRIAGE.instructions],
      ['user', 'Login fails on Safari'],
    ]);
    expect(h.model.requests[1]?.tools?.map((t) => t.function?.name)).toEqual(['create_note']);
    // The card, /approvals show and the audit log name the agent that asked, with the chain it was called through.
    expect(JSON.stringify(card.params.blocks)).toContain('triage → create_note');
    const shown = await h.approvals(`show ${approvalIdOf(card)}`, 'UADMIN');
    expect(JSON.stringify(shown.params.blocks)).toContain('triage → create_note');
    expect(await payloads(h, 'approval.requested')).toEqual([
      expect.objectContaining({ tool: 'create_note', agent: 'triage', agentChain: ['triage'] }),
    ]);
    h.model.enqueue(reply.text('Filed it as a note.'), reply.text('Triage filed the bug.'));
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Triage filed the bug.');
    const [, , nested, outer] = h.model.requests;
    expect(nested?.model).toBe('triage-model');
    expect(nested?.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: expect.stringMatching(/^Created note/),
    });
    expect(outer?.model).not.toBe('triage-model');
    expect(outer?.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_outer',
      content: 'Filed it as a note.',
    });
    // Nothing the nested agent said or called reached the thread or its history.
    expect(h.texts()).toEqual(['Triage filed the bug.']);
    expect(await count(h, "SELECT COUNT(*) AS n FROM conversation_items WHERE kind = 'tool_call'")).toBe(1);
    expect(await count(h, 'SELECT COUNT(*) AS n FROM notes')).toBe(1);
    expect(await payloads(h, 'approval.approved')).toEqual([
      expect.objectContaining({ tool: 'create_note', agent: 'triage', agentChain: ['triage'] }),
    ]);
  });

  it("policy rules may test the agent: the same tool is free inside triage and needs a card for the bot's own agent", async () => {
    const policy = join(dir, 'policy.json');
    writeFileSync(
      policy,
      JSON.stringify({
        tools: { create_note: { rules: [{ when: "agent == 'triage'", requireApproval: false }] } },
      }),
    );
    const h = await start({ APPROVAL_POLICY_FILE: policy });
    h.model.enqueue(
      reply.toolCalls([{ name: 'triage', arguments: { input: 'File it' }, id: 'call_outer' }]),
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'from triage' } }]),
      reply.text('Filed by triage.'),
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'from main' } }]),
    );
    await h.mention('file it, then note it yourself');
    const [card] = await h.waitForCards(1);
    expect(JSON.stringify(card?.params.blocks)).toContain('`create_note`');
    expect(JSON.stringify(card?.params.blocks)).not.toContain('triage →');
    expect(await rows(h.database, 'SELECT text FROM notes')).toEqual([{ text: 'from triage' }]);
  });

  it("limits: an agent's own bound ends its frame with a sentence for its caller; the run's bound counts every frame", async () => {
    writeFileSync(
      join(dir, 'agents.json'),
      JSON.stringify({ agents: [{ ...TRIAGE, tools: ['get_current_time'], maxTurns: 2 }] }),
    );
    const h = await start();
    const clock = () => reply.toolCalls([{ name: 'get_current_time', arguments: {} }]);
    h.model.enqueue(
      reply.toolCalls([{ name: 'triage', arguments: { input: 'Loop' }, id: 'call_outer' }]),
      clock(),
      clock(),
      reply.text('Triage gave up.'),
    );
    await h.mention('loop please');
    await h.waitForText((text) => text === 'Triage gave up.');
    expect(h.model.requests[3]?.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: 'call_outer',
      content: 'The agent triage stopped at its limit of 2 model calls without an answer.',
    });
    await h.close();
    open.splice(open.indexOf(h), 1);
    // Without a bound of its own, a looping agent stops at the run's: 10 model calls, whichever agent made them.
    writeFileSync(
      join(dir, 'agents.json'),
      JSON.stringify({ agents: [{ ...TRIAGE, tools: ['get_current_time'] }] }),
    );
    const looping = await start();
    looping.model.setHandler((request) =>
      request.model === 'triage-model'
        ? clock()
        : reply.toolCalls([{ name: 'triage', arguments: { input: 'Loop' } }]),
    );
    await looping.mention('loop forever');
    await looping.waitForText((text) => text.includes('limit of 10 model calls'));
    expect(looping.model.requests).toHaveLength(10);
    // The run ended inside nested agents: their conversations are not kept with it.
    const [ended] = await rows(looping.database, "SELECT state FROM runs WHERE status = 'failed'");
    expect(JSON.parse(String(ended?.state)).frames).toEqual([]);
  });

  it('an agent that needs approval itself: its card first, then the card of its own call, each decided once', async () => {
    writeFileSync(join(dir, 'agents.json'), JSON.stringify({ agents: [{ ...TRIAGE, needsApproval: true }] }));
    const h = await start();
    h.model.enqueue(
      reply.toolCalls([{ name: 'triage', arguments: { input: 'Login fails on Safari' }, id: 'call_outer' }]),
    );
    await h.mention('please file this bug');
    const [outerCard] = await h.waitForCards(1);
    if (!outerCard) throw new Error('no card');
    expect(JSON.stringify(outerCard.params.blocks)).toContain('`triage`');
    expect(h.model.requests).toHaveLength(1);
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'Bug: Safari login' } }]));
    await h.click(outerCard, 'approve', 'U2');
    const [, innerCard] = await h.waitForCards(2);
    if (!innerCard) throw new Error('no second card');
    expect(JSON.stringify(innerCard.params.blocks)).toContain('triage → create_note');
    h.model.enqueue(reply.text('Filed.'), reply.text('Triage filed it.'));
    await h.click(innerCard, 'approve', 'U2');
    await h.waitForText((text) => text === 'Triage filed it.');
    expect(
      await rows(h.database, 'SELECT tool_name, status, result FROM approvals ORDER BY created_at'),
    ).toEqual([
      { tool_name: 'triage', status: 'executed', result: 'Filed.' },
      { tool_name: 'create_note', status: 'executed', result: expect.stringMatching(/^Created note/) },
    ]);
    expect(await count(h, "SELECT COUNT(*) AS n FROM audit_events WHERE kind = 'tool.started'")).toBe(2);
  });

  it('reject: the nested model reads the rejection as the seeds word it; the outer model gets its answer', async () => {
    const h = await start();
    const card = await pausedInsideTriage(h);
    h.model.enqueue(reply.text('The note was not approved, so nothing was filed.'), reply.text('Not filed.'));
    await rejectWithModal(h, card, 'U2');
    await h.waitForText((text) => text === 'Not filed.');
    expect(h.model.requests[2]?.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: expect.stringMatching(/^n1/),
      content: REJECTION_TEXT,
    });
    expect(h.model.requests[3]?.messages.at(-1)).toMatchObject({
      tool_call_id: 'call_outer',
      content: 'The note was not approved, so nothing was filed.',
    });
    expect(await count(h, 'SELECT COUNT(*) AS n FROM notes')).toBe(0);
  });

  it('two clicks at once: one decision, the nested tool runs once, the run goes on once', async () => {
    const h = await start();
    const card = await pausedInsideTriage(h);
    h.model.enqueue(reply.text('Filed.'), reply.text('Done, filed once.'));
    await Promise.all([h.click(card, 'approve', 'U2'), h.click(card, 'approve', 'U3')]);
    await h.waitForText((text) => text === 'Done, filed once.');
    expect(await count(h, 'SELECT COUNT(*) AS n FROM notes')).toBe(1);
    expect(await count(h, "SELECT COUNT(*) AS n FROM audit_events WHERE kind = 'tool.started'")).toBe(1);
    expect(await count(h, "SELECT COUNT(*) AS n FROM audit_events WHERE kind = 'approval.approved'")).toBe(1);
    expect(h.model.requests).toHaveLength(4);
  });

  it('an approved agent at work when its process stops: the next process carries it on, and never calls it cut off', async () => {
    writeFileSync(join(dir, 'agents.json'), JSON.stringify({ agents: [{ ...TRIAGE, needsApproval: true }] }));
    const lease = { RUN_LEASE_MS: '1000' };
    const first = await start(lease);
    first.model.enqueue(
      reply.toolCalls([{ name: 'triage', arguments: { input: 'Login fails on Safari' }, id: 'call_outer' }]),
      reply.hang(),
    );
    await first.mention('please file this bug');
    const [card] = await first.waitForCards(1);
    if (!card) throw new Error('no card');
    await first.click(card, 'approve', 'U2');
    // Triage is at work (its model is asked) when the process stops: the run is left to the next one.
    await first.model.waitForRequests(2);
    await first.close();
    open.splice(open.indexOf(first), 1);

    const second = await start(lease);
    second.model.enqueue(reply.text('Filed.'), reply.text('Triage filed it.'));
    await second.waitForText((text) => text === 'Triage filed it.');
    await second.bot.conversations.idle();
    expect(second.model.requests[0]?.model).toBe('triage-model');
    // Triage was not cut off: it went on where it was, so nothing says its outcome is unknown.
    expect(second.texts().filter((text) => text.includes('unknown'))).toEqual([]);
    expect(await rows(second.database, 'SELECT tool_name, status, result FROM approvals')).toEqual([
      { tool_name: 'triage', status: 'executed', result: 'Filed.' },
    ]);
  });

  it('a restart between: a new bot on the same database resumes inside the nested agent', async () => {
    const first = await start();
    const card = await pausedInsideTriage(first);
    await first.close();
    open.splice(open.indexOf(first), 1);
    const second = await start();
    second.model.enqueue(reply.text('Filed after the restart.'), reply.text('Triage filed it after all.'));
    await second.click(card, 'approve', 'U2');
    await second.waitForText((text) => text === 'Triage filed it after all.');
    // The nested agent picks up its own conversation from the stored run: its task, its call, the output.
    expect(second.model.requests[0]?.model).toBe('triage-model');
    expect(conversation(second, 0).slice(0, 2)).toEqual([
      ['system', TRIAGE.instructions],
      ['user', 'Login fails on Safari'],
    ]);
    expect(second.model.requests[0]?.messages.at(-1)).toMatchObject({ role: 'tool' });
    expect(second.model.requests[1]?.messages.at(-1)).toMatchObject({
      tool_call_id: 'call_outer',
      content: 'Filed after the restart.',
    });
    expect(await count(second, 'SELECT COUNT(*) AS n FROM notes')).toBe(1);
  });
});
