import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { StoredAuditEvent } from '../../src/audit/audit-event.js';
import { verifyChain } from '../../src/audit/verify-chain.js';
import { createAuditQueryStore } from '../../src/db/audit-query-store.js';
import { openDatabaseReadOnly } from '../../src/db/open-database.js';
import { reply } from '../support/fake-openai.js';
import { type Harness, startHarness } from './harness.js';

describe('audit log of a conversation', () => {
  let h: Harness;
  const chain = async (): Promise<StoredAuditEvent[]> => {
    const database = await openDatabaseReadOnly(h.database);
    try {
      return await createAuditQueryStore(database).chain();
    } finally {
      await database.close();
    }
  };

  beforeEach(async () => {
    h = await startHarness();
  });
  afterEach(async () => {
    await h.close();
  });

  it('records request, decision, resume, execution and the run, chained, with planted secrets redacted', async () => {
    const planted = {
      text: 'remember xoxb-123456789012-abcdefabcdef',
      api_key: 'plain-secret-value',
      nested: { authorization: 'Bearer abc', note: 'sk-abcdefghijklmnopqrstuvwx' },
    };
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: planted }]), reply.text('Saved.'));
    await h.mention('save this');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.click(card, 'approve', 'U2');
    await h.waitForText((text) => text === 'Saved.');

    const events = await chain();
    expect(events.map((e) => e.kind)).toEqual([
      'policy.loaded',
      'run.started',
      'approval.requested',
      'run.paused',
      'approval.card_posted',
      'approval.approved',
      'run.resumed',
      'tool.started',
      'tool.finished',
      'run.completed',
    ]);
    expect(verifyChain(events)).toMatchObject({ ok: true, count: 10 });
    const requested = events.find((e) => e.kind === 'approval.requested');
    expect(requested?.actor).toBe('U1');
    expect(requested?.payload.arguments).toEqual({
      text: 'remember [redacted]',
      api_key: '[redacted]',
      nested: { authorization: '[redacted]', note: '[redacted]' },
    });
    const everything = JSON.stringify(events);
    for (const secret of ['xoxb-123456789012', 'plain-secret-value', 'Bearer abc', 'sk-abcdefghij'])
      expect(everything).not.toContain(secret);
    expect(events.find((e) => e.kind === 'approval.approved')?.actor).toBe('U2');
    expect(events.find((e) => e.kind === 'run.resumed')?.actor).toBe('U2');
    const finished = events.find((e) => e.kind === 'tool.finished');
    expect(finished?.payload).toMatchObject({
      tool: 'create_note',
      ok: true,
      outputBytes: 'Created note #1.'.length,
    });
    expect(typeof finished?.payload.durationMs).toBe('number');
    expect(typeof finished?.payload.startedAt).toBe('number');
    expect(events[0]?.payload).toHaveProperty('summary');
  });
});
