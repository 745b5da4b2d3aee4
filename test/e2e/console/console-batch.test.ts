import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seedApprovals } from '../../support/audit-seed.js';
import { signInWithLink } from '../../support/console-client.js';
import { reply } from '../../support/fake-openai.js';
import type { SlackCall } from '../../support/fake-slack.js';
import { waitUntil } from '../../support/wait.js';
import { rows } from '../db-rows.js';
import { approvalIdOf, cardTs, type Harness, startHarness } from '../harness.js';

const ADMIN = 'UADMIN';

describe('web console: batch decisions', () => {
  let h: Harness;
  let origin: string;
  const env = () => ({ DATABASE_PATH: h.dbPath, ADMIN_USER_IDS: ADMIN });
  beforeEach(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN } });
    origin = new URL(h.url).origin;
  });
  afterEach(async () => {
    await h.close();
  });

  async function twoCards(): Promise<SlackCall[]> {
    for (const text of ['first', 'second']) {
      h.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text } }]));
      await h.mention(`note: ${text}`);
      await h.waitForCards(text === 'first' ? 1 : 2);
    }
    h.model.enqueue(reply.text('Done.'), reply.text('Done.'));
    return h.cards();
  }
  const decisions = async () =>
    (await rows(h.dbPath, 'select kind, actor, payload from audit_events order by seq')).filter((e) =>
      ['approval.approved', 'approval.rejected', 'approval.refused'].includes(String(e.kind)),
    );
  const bothDone = () =>
    waitUntil(() => h.texts().filter((t) => t === 'Done.').length === 2 || undefined, {
      message: 'expected both runs to answer',
    });

  it('the API approves the selection, each on its own; one the person may not decide is skipped with the reason; CSRF is required', async () => {
    const cards = await twoCards();
    const [other] = await seedApprovals(h.database, { toolName: 'delete_note', approvers: ['U0BOSS'] });
    const ids = [...cards.map(approvalIdOf), String(other)];
    const admin = await signInWithLink(origin, env(), ADMIN);

    const forged = await admin.postJson(
      '/console/api/approvals/decisions',
      { ids, decision: 'approve' },
      null,
    );
    expect(forged.status).toBe(403);
    expect(await decisions()).toEqual([]);
    const bad = await admin.postJson('/console/api/approvals/decisions', { ids: [], decision: 'approve' });
    expect(bad.status).toBe(400);

    const answer = await admin.postJson('/console/api/approvals/decisions', { ids, decision: 'approve' });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({
      decided: cards.map((card) => ({ id: approvalIdOf(card), status: 'approved' })),
      counted: [],
      skipped: [
        {
          id: other,
          code: 'not_permitted',
          message: 'You may not see or decide this request, or it does not exist.',
        },
      ],
    });
    for (const card of cards) {
      const update = await h.slack.waitForCall('chat.update', (c) => c.params.ts === cardTs(card));
      expect(JSON.stringify(update.params.blocks)).toContain(`Approved by <@${ADMIN}>`);
    }
    await bothDone();
    const audit = await decisions();
    expect(audit.map((e) => e.kind)).toEqual(['approval.approved', 'approval.approved', 'approval.refused']);
    for (const event of audit.slice(0, 2))
      expect(JSON.parse(String(event.payload))).toMatchObject({ surface: 'web', batch: true });

    const again = await admin.postJson('/console/api/approvals/decisions', { ids, decision: 'reject' });
    const skipped = ((await again.json()) as { skipped: { code: string }[] }).skipped.map((s) => s.code);
    expect(skipped).toEqual(['already_decided', 'already_decided', 'not_permitted']);
  });

  it('the decide page ticks requests into one form that rejects them with one reason, and says which were skipped', async () => {
    const cards = await twoCards();
    const ids = cards.map(approvalIdOf);
    const admin = await signInWithLink(origin, env(), ADMIN);
    const page = await (await admin.get('/console')).text();
    expect(page).toContain('action="/console/decisions"');
    for (const id of ids) expect(page).toContain(`name="ids" value="${id}" form="batch"`);

    const form = new URLSearchParams([
      ['csrf', admin.csrf],
      ['ids', ids[0] ?? ''],
      ['ids', ids[1] ?? ''],
      ['ids', 'apr_000000000000000000000000'],
      ['reason', 'not this week'],
      ['decision', 'reject'],
    ]);
    const posted = await fetch(`${origin}/console/decisions`, {
      method: 'POST',
      redirect: 'manual',
      headers: { cookie: admin.cookie, 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
    expect(posted.status).toBe(303);
    const notice = await (await admin.get(String(posted.headers.get('location')))).text();
    expect(notice).toContain(
      'Rejected 2 selected requests. Skipped 1: apr_000000000000000000000000 (you may not decide it, or it does not exist).',
    );
    await bothDone();
    const outputs = h.model.requests.flatMap((r) => r.messages.filter((m) => m.role === 'tool'));
    expect(outputs.filter((m) => String(m.content).includes('not this week'))).toHaveLength(2);
    // The made-up ID is refused as any unknown request is: audited, naming only the ID that was sent.
    const audit = await decisions();
    expect(audit.map((e) => e.kind)).toEqual(['approval.rejected', 'approval.rejected', 'approval.refused']);
    expect(JSON.parse(String(audit[2]?.payload))).toMatchObject({
      reason: 'unknown_request',
      requested: 'apr_000000000000000000000000',
    });
  });
});
