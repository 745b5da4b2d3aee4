import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { seedApprovals } from '../../support/audit-seed.js';
import { signInWithLink } from '../../support/console-client.js';
import { type Harness, startHarness } from '../harness.js';

const ADMIN = 'UADMIN';

/** The requests a decide page shows, in order, by the link of each one's heading. */
const shownIds = (page: string) =>
  [...page.matchAll(/<h2 id="title-[^"]+"><a href="\/console\/approvals\/([^"]+)">/g)].map((m) => m[1]);

describe('web console: a long queue on the decide page', () => {
  let h: Harness;
  beforeEach(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN } });
  });
  afterEach(async () => {
    await h.close();
  });

  it('shows 50 requests a page, oldest first, says how many wait and links the next page', async () => {
    const start = Date.now() - 3_600_000;
    const ids = await seedApprovals(
      h.database,
      ...Array.from({ length: 53 }, (_, i) => ({ createdAt: start + i * 1000 })),
    );
    const admin = await signInWithLink(
      new URL(h.url).origin,
      { DATABASE_PATH: h.dbPath, ADMIN_USER_IDS: ADMIN },
      ADMIN,
    );

    const first = await (await admin.get('/console')).text();
    expect(first).toContain('53 requests wait for your decision, oldest first (1–50 here).');
    expect(shownIds(first)).toEqual(ids.slice(0, 50));
    const link = first.match(/href="(\/console\?cursor=[A-Za-z0-9_-]+)"/)?.[1];
    if (!link) throw new Error('no link to the next page');

    // A request decided meanwhile (on the first page) moves nothing: the next page starts after the 50th.
    const decided = await admin.postJson(`/console/api/approvals/${ids[3]}/decision`, {
      decision: 'reject',
      reason: 'not now',
    });
    expect(decided.status).toBe(200);
    const second = await (await admin.get(link)).text();
    expect(shownIds(second)).toEqual(ids.slice(50));
    // One fewer waits now, so the same requests are the 50th to 52nd.
    expect(second).toContain('(50–52 here)');
    expect(second).toContain('href="/console">← Oldest</a>');
    expect(second).not.toContain('cursor=');
    // Every request on a page still carries its decision forms.
    expect(second.match(/<input type="hidden" name="decision" value="reject">/g)).toHaveLength(3);

    // The JSON API counts the same queue and pages it the same way.
    type Page = { items: { id: string }[]; total: number; nextCursor: string | null };
    const api = (await (await admin.get('/console/api/approvals?status=pending&limit=30')).json()) as Page;
    expect(api.total).toBe(52);
    const rest = (await (
      await admin.get(`/console/api/approvals?status=pending&limit=30&cursor=${api.nextCursor}`)
    ).json()) as Page;
    expect([...api.items, ...rest.items].map((a) => a.id)).toEqual(ids.filter((_, i) => i !== 3));
    expect(rest.nextCursor).toBeNull();
  });
});
