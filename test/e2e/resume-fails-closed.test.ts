import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { type DatabaseTarget, execute, rows } from './db-rows.js';
import { type Harness, startHarness } from './harness.js';

const cancelledAudit = async (target: DatabaseTarget) =>
  (await rows(target, "SELECT payload FROM audit_events WHERE kind = 'approval.cancelled'")).map(
    (e) => JSON.parse(String(e.payload)).reason,
  );

describe('a run the current code cannot resume fails closed', () => {
  const open: Harness[] = [];
  let dir: string | undefined;
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('an unknown run-state version: nothing runs, the approval is cancelled with the reason, card, thread and audit say so', async () => {
    const h = await startHarness();
    open.push(h);
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'from the future' } }]));
    await h.mention('add a note');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    // A newer release wrote this run's state, then the deploy was rolled back.
    await execute(
      h.database,
      "UPDATE runs SET state = json_set(state, '$.schemaVersion', 99), schema_version = 99",
    );

    await h.click(card, 'approve', 'U2');
    const told = await h.waitForText((text) => text.startsWith('I cannot resume this run'));
    expect(told).toBe('I cannot resume this run: Run state schema version 99 is not supported.');
    const update = await h.slack.waitForCall('chat.update', (c) =>
      JSON.stringify(c.params.blocks).includes('Cancelled'),
    );
    expect(JSON.stringify(update.params.blocks)).toContain(
      'Cancelled: Run state schema version 99 is not supported.',
    );
    expect(await rows(h.database, 'SELECT status, reason FROM approvals')).toEqual([
      { status: 'cancelled', reason: 'Run state schema version 99 is not supported.' },
    ]);
    expect(await rows(h.database, 'SELECT status FROM runs')).toEqual([{ status: 'cancelled' }]);
    expect(await rows(h.database, 'SELECT COUNT(*) AS n FROM notes')).toEqual([{ n: 0 }]);
    expect(await cancelledAudit(h.database)).toEqual(['Run state schema version 99 is not supported.']);
    expect(h.model.requests).toHaveLength(1);
  });

  it('a tool removed by a deploy while its card waited: approving it runs nothing and cancels it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'bot-retired-'));
    const dbPath = join(dir, 'bot.db');
    const before = await startHarness({ dbPath });
    before.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'orphan' } }]));
    await before.mention('add orphan');
    const [card] = await before.waitForCards(1);
    if (!card) throw new Error('no card');
    await before.close();

    const after = await startHarness({
      dbPath,
      overrides: { tools: (builtIn) => builtIn.filter((tool) => tool.name !== 'create_note') },
    });
    open.push(after);
    await after.click(card, 'approve', 'U2');
    const reason = 'The tool create_note is no longer available.';
    await after.waitForText((text) => text === `I cannot resume this run: ${reason} Nothing was executed.`);
    const update = await after.slack.waitForCall('chat.update', (c) =>
      JSON.stringify(c.params.blocks).includes('Cancelled'),
    );
    expect(JSON.stringify(update.params.blocks)).toContain(`Cancelled: ${reason}`);
    expect(await rows(dbPath, 'SELECT status, reason FROM approvals')).toEqual([
      { status: 'cancelled', reason },
    ]);
    expect(await rows(dbPath, 'SELECT COUNT(*) AS n FROM notes')).toEqual([{ n: 0 }]);
    expect(await cancelledAudit(dbPath)).toEqual([reason]);
    expect(after.model.requests).toHaveLength(0);
  });
});

describe('a call approved under arguments a deploy no longer accepts', () => {
  let dir: string | undefined;
  const open: Harness[] = [];
  afterEach(async () => {
    for (const h of open.splice(0)) await h.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is never run: the model is told why, the request is recorded executed, and the audit log says tool.not_run', async () => {
    dir = mkdtempSync(join(tmpdir(), 'bot-reshaped-'));
    const dbPath = join(dir, 'bot.db');
    const before = await startHarness({ dbPath });
    before.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'a long note' } }]));
    await before.mention('add a note');
    const [card] = await before.waitForCards(1);
    if (!card) throw new Error('no card');
    await before.close();

    const refusal = 'text: must be at most 3 characters';
    const after = await startHarness({
      dbPath,
      overrides: {
        tools: (builtIn) =>
          builtIn.map((tool) =>
            tool.name === 'create_note'
              ? Object.assign(Object.create(tool) as typeof tool, {
                  parseArguments: () => ({ ok: false as const, error: refusal }),
                })
              : tool,
          ),
      },
    });
    open.push(after);
    after.model.enqueue(reply.text('The note was not added.'));
    await after.click(card, 'approve', 'U2');
    await after.waitForText((text) => text === 'The note was not added.');
    expect(JSON.stringify(after.model.requests[0]?.messages.at(-1))).toContain(refusal);
    expect(await rows(dbPath, 'SELECT status FROM approvals')).toEqual([{ status: 'executed' }]);
    expect(await rows(dbPath, 'SELECT COUNT(*) AS n FROM notes')).toEqual([{ n: 0 }]);
    const notRun = await rows(dbPath, "SELECT payload FROM audit_events WHERE kind = 'tool.not_run'");
    expect(notRun.map((e) => JSON.parse(String(e.payload)))).toEqual([
      { tool: 'create_note', callId: expect.any(String), error: refusal },
    ]);
  });
});
