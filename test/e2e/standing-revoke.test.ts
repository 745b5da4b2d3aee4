import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { rows } from './db-rows.js';
import { approvalIdOf, type Harness, startHarness } from './harness.js';

const ADMIN = 'UADMIN';

describe('revoking "Approve for this thread"', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN, OPENAI_STREAM: 'false' } });
  });
  afterEach(async () => {
    await h.close();
  });

  const revoke = async (text: string, user = ADMIN) => String((await h.approvals(text, user)).params.text);
  const auditKinds = () =>
    rows(h.database, "SELECT kind, actor FROM audit_events WHERE kind LIKE 'standing.%' ORDER BY seq");

  it('an admin revokes it with /approvals revoke ID: the next call of the tool asks again, and both ends are audited', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'one' } }]),
      reply.text('First.'),
    );
    const ts = await h.mention('note one');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.click(card, 'approve_thread', 'U2');
    await h.waitForText((text) => text === 'First.');

    // Covered by the grant: no card.
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'two' } }]),
      reply.text('Second.'),
    );
    await h.message('note two', { threadTs: ts });
    await h.waitForText((text) => text === 'Second.');
    expect(h.cards()).toHaveLength(1);

    const approvalId = approvalIdOf(card);
    expect(await revoke(`revoke ${approvalId}`, 'U2')).not.toContain('Revoked');
    expect(await revoke(`revoke ${approvalId}`)).toContain('Revoked: `create_note`');
    expect(await revoke(`revoke ${approvalId}`)).toContain('has no active');
    expect(await revoke('revoke apr_000000000000000000000000')).toContain('There is no request');

    h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'three' } }]));
    await h.message('note three', { threadTs: ts });
    await h.waitForCards(2);
    expect(await auditKinds()).toEqual([
      { kind: 'standing.granted', actor: 'U2' },
      { kind: 'standing.revoked', actor: ADMIN },
    ]);
  });
});
