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
    expect(first).toContain('href="/console?cursor=50"');

    const second = await (await admin.get('/console?cursor=50')).text();
    expect(shownIds(second)).toEqual(ids.slice(50));
    expect(second).toContain('(51–53 here)');
    expect(second).toContain('href="/console">← Oldest</a>');
    expect(second).not.toContain('cursor=');
    // Every request on a page still carries its decision forms.
    expect(second.match(/<input type="hidden" name="decision" value="reject">/g)).toHaveLength(3);

    // The JSON API counts the same queue.
    const api = (await (await admin.get('/console/api/approvals?status=pending')).json()) as {
      total: number;
      nextCursor: string | null;
    };
    expect(api).toMatchObject({ total: 53, nextCursor: '50' });
  });
});
