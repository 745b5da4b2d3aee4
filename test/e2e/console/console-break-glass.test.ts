import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { signInWithLink } from '../../support/console-client.js';
import { reply } from '../../support/fake-openai.js';
import { rows } from '../db-rows.js';
import { approvalIdOf, type Harness } from '../harness.js';
import { startPolicyHarness } from '../policy-support.js';

const ADMIN = 'UADMIN';

/** An admin breaking glass from the web console, as from App Home: justified, marked, audited, for review. */
describe('web console: break glass', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startPolicyHarness(
      { tools: { create_note: { approvers: ['conversation', 'admins'], allowSelfApproval: false } } },
      { env: { ADMIN_USER_IDS: `${ADMIN},UADMIN2` } },
    );
  });
  afterEach(async () => h.close());

  it("an admin's own request, which the rule refuses them, is approved only with a justification", async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'hotfix' } }]),
      reply.text('Hotfix noted.'),
    );
    await h.mention('note the hotfix', { user: ADMIN });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const id = approvalIdOf(card);
    const admin = await signInWithLink(
      new URL(h.url).origin,
      { DATABASE_PATH: h.dbPath, ADMIN_USER_IDS: ADMIN },
      ADMIN,
    );

    const page = await (await admin.get(`/console/approvals/${id}`)).text();
    expect(page).toContain('Break glass and approve');
    const plain = await admin.postJson(`/console/api/approvals/${id}/decision`, { decision: 'approve' });
    expect(plain.status).toBe(403);
    const short = await admin.postJson(`/console/api/approvals/${id}/decision`, {
      decision: 'approve',
      breakGlass: 'urgent',
    });
    expect(short.status).toBe(400);
    expect(((await short.json()) as { error: { code: string } }).error.code).toBe('break_glass_refused');

    const form = await admin.postForm(`/console/approvals/${id}/decision`, {
      decision: 'approve',
      justification: 'Production is down and the on-call admin is me.',
    });
    expect(form.status).toBe(303);
    expect(form.headers.get('location')).toContain('outcome=');
    await h.waitForText((t) => t === 'Hotfix noted.');
    const events = await rows(
      h.dbPath,
      "select kind, actor, payload from audit_events where kind in ('approval.approved', 'approval.break_glass') order by seq",
    );
    expect(events.map((e) => e.kind)).toEqual(['approval.approved', 'approval.break_glass']);
    expect(JSON.parse(String(events[0]?.payload))).toMatchObject({ breakGlass: true, surface: 'web' });
  });
});
