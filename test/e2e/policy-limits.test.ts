import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import type { Harness } from './harness.js';
import { query, startPolicyHarness } from './policy-support.js';

const limited = (overLimit?: 'admins') => ({
  tools: {
    create_note: {
      approvers: ['conversation', 'admins'],
      limits: [{ per: 'requester', max: 2, window: '1d' }],
      ...(overLimit ? { overLimit } : {}),
    },
  },
});

describe('approval policy: limits', () => {
  let h: Harness;
  afterEach(async () => {
    await h?.close();
  });

  /** One mention whose model asks for one note; returns once its card is posted. */
  async function askForNote(n: number): Promise<void> {
    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: `note ${n}` } }]));
    await h.mention(`note ${n}`, { user: 'U1' });
  }

  it('the third request with max 2 is not offered: the model reads why, the thread is told, it is audited', async () => {
    h = await startPolicyHarness(limited());
    await askForNote(1);
    await h.waitForCards(1);
    await askForNote(2);
    await h.waitForCards(2);
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'note 3' } }]),
      reply.text('The limit was reached.'),
    );
    await h.mention('note 3', { user: 'U1' });
    await h.waitForText((t) => t === 'The limit was reached.');
    expect(h.cards()).toHaveLength(2);
    const told = h.texts().filter((t) => t.includes('was not offered for approval'));
    expect(told).toHaveLength(1);
    expect(told[0]).toContain('2 requests per requester in 24h');
    const read = JSON.stringify(h.model.requests.at(-1)?.messages);
    expect(read).toContain('Tool execution was not offered for approval');
    expect(read).toContain('it resets at');
    const [event] = await query(
      h.database,
      "SELECT payload FROM audit_events WHERE kind = 'approval.limited'",
    );
    expect(JSON.parse(String(event?.payload))).toMatchObject({
      tool: 'create_note',
      limit: { per: 'requester', max: 2, window: '24h' },
      count: 2,
      outcome: 'refused',
    });
    expect(await query(h.database, "SELECT id FROM notes WHERE text = 'note 3'")).toEqual([]);
  });

  it('with overLimit "admins" the third request goes to admins only', async () => {
    h = await startPolicyHarness(limited('admins'));
    await askForNote(1);
    await askForNote(2);
    await askForNote(3);
    const cards = await h.waitForCards(3);
    const rows = await query(h.database, 'SELECT rule, status FROM approvals ORDER BY created_at');
    const rules = rows.map((r) => JSON.parse(String(r.rule)));
    expect(rules.map((r) => r.approvers)).toEqual([
      ['conversation', 'admins'],
      ['conversation', 'admins'],
      ['admins'],
    ]);
    expect(rows.map((r) => r.status)).toEqual(['pending', 'pending', 'pending']);
    await h.waitForText((t) => t.includes('was sent to admins only'));
    const third = cards[2];
    if (!third) throw new Error('no third card');
    // Someone in the conversation who is not an admin is refused; an admin may decide.
    h.model.enqueue(reply.text('Saved.'));
    await h.click(third, 'approve', 'U2');
    await h.click(third, 'approve', 'UADMIN');
    await h.waitForText((t) => t === 'Saved.');
    const [approved] = await query(
      h.database,
      "SELECT actor FROM audit_events WHERE kind = 'approval.approved' ORDER BY seq DESC",
    );
    expect(approved?.actor).toBe('UADMIN');
    const events = await query(h.database, "SELECT kind FROM audit_events WHERE kind = 'approval.limited'");
    expect(events).toHaveLength(1);
  });
});
