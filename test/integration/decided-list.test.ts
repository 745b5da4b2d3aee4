import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DecidedQuery, DecisionPosition } from '../../src/approvals/audit-queries.js';
import { decidedPageQuery } from '../../src/db/audit-query-store.js';
import { rows } from '../../src/db/sql/program.js';
import { seedApproval } from '../support/audit-seed.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';

const BASE = Date.UTC(2026, 4, 1);

/**
 * The decided list pages by position (decision time, then id, latest first), on both engines: every request
 * once, in order, whatever is decided between two pages, read through its index.
 */
describe.each(DATABASE_KINDS)('the decided list on %s', (kind) => {
  let s: TestStores;
  beforeEach(async () => {
    s = await openTestStores(kind);
  });
  afterEach(async () => s.close());

  /** Every page of `query` from the start, `limit` at a time; `between` runs after each page but the last. */
  async function allPages(
    query: Omit<DecidedQuery, 'after' | 'limit'>,
    limit: number,
    between = async () => {},
  ) {
    const seen: string[] = [];
    let after: DecisionPosition | undefined;
    for (let page = 0; page < 50; page++) {
      const found = await s.stores.auditQueries.decided({ ...query, limit, ...(after ? { after } : {}) });
      seen.push(...found.items.map((a) => a.id));
      if (!found.next) return seen;
      after = found.next;
      await between();
    }
    throw new Error('the pages never ended');
  }

  it('gives each decided request once, latest decision first, ties by id; a request decided meanwhile shifts nothing', async () => {
    const ids: { id: string; at: number }[] = [];
    const decided = async (at: number, extra: Parameters<typeof seedApproval>[1] = {}) => {
      const id = await seedApproval(s.db, {
        createdAt: at - 60_000,
        status: 'approved',
        decidedBy: 'U2',
        decidedAt: at,
        ...extra,
      });
      ids.push({ id, at });
      return id;
    };
    // Three decided at the same millisecond, so the tie-break shows across page ends.
    for (const at of [BASE + 5, BASE + 5, BASE + 5, BASE + 9, BASE + 1, BASE + 7, BASE + 3])
      await decided(at);
    // Cancelled by a run that could not resume: no decision time, so its last change (here its creation) counts.
    const cancelled = await seedApproval(s.db, { createdAt: BASE + 4, status: 'cancelled' });
    ids.push({ id: cancelled, at: BASE + 4 });
    await seedApproval(s.db, { createdAt: BASE, requesterId: 'U1' });
    await seedApproval(s.db, { createdAt: BASE, teamId: 'T2', status: 'rejected', decidedBy: 'U2' });
    const expected = [...ids]
      .sort((a, b) => b.at - a.at || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))
      .map((a) => a.id);

    expect(await allPages({ teamId: 'T1' }, 100)).toEqual(expected);
    // Offset paging would show a request twice here: each new decision pushes the list down by one.
    let later = BASE + 100;
    const paged = await allPages({ teamId: 'T1' }, 2, async () => {
      later += 1;
      await decided(later);
    });
    expect(paged).toEqual(expected);
    const first = await s.stores.auditQueries.decided({ teamId: 'T1', limit: 3 });
    expect(first.total).toBe(expected.length + 3);
    expect(first.items.map((a) => a.id)).toEqual(
      ids
        .slice(-3)
        .reverse()
        .map((a) => a.id),
    );
  });

  it('keeps a person who is not an auditor to the requests they made or voted on', async () => {
    const mine = await seedApproval(s.db, {
      requesterId: 'U7',
      status: 'rejected',
      decidedBy: 'U2',
      decidedAt: BASE + 2,
    });
    const voted = await seedApproval(s.db, { status: 'approved', decidedBy: 'U7', decidedAt: BASE + 3 });
    await seedApproval(s.db, { status: 'approved', decidedBy: 'U2', decidedAt: BASE + 4 });
    expect(await allPages({ teamId: 'T1', userId: 'U7' }, 1)).toEqual([voted, mine]);
  });

  it('reads a deep page in order from the index, without sorting', async () => {
    for (let i = 0; i < 300; i++)
      await seedApproval(s.db, { status: 'approved', decidedBy: 'U2', decidedAt: BASE + i, createdAt: BASE });
    const query = decidedPageQuery({ teamId: 'T1', limit: 51, after: { at: BASE + 150, id: 'apr_m' } });
    if (kind === 'sqlite') {
      const plan = (await s.db.read(() => rows(sql`explain query plan ${query}`))).map((r) =>
        String(r.detail),
      );
      expect(plan.join('\n')).toContain('USING INDEX approvals_team_decided');
      expect(plan.join('\n')).not.toContain('TEMP B-TREE');
    } else {
      await s.db.read(() => rows(sql`analyze approvals`));
      const plan = (await s.db.read(() => rows(sql`explain ${query}`))).map((r) => String(r['QUERY PLAN']));
      expect(plan.join('\n')).toContain('approvals_team_decided');
      expect(plan.join('\n')).not.toMatch(/\bSort\b/);
    }
  });
});
