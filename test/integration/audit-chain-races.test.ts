import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type AuditInput, auditEvent } from '../../src/audit/audit-event.js';
import { verifyChain } from '../../src/audit/verify-chain.js';
import { EVENTS_PER_INSERT } from '../../src/db/audit-writer.js';
import { audit } from '../../src/db/sql/program.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';

const WRITERS = 6;

const events = (writer: number, round: number, n: number): AuditInput[] =>
  Array.from({ length: n }, (_, i) =>
    auditEvent('policy.loaded', { at: Date.now(), actor: `U${writer}`, payload: { writer, round, i } }),
  );

/**
 * The audit chain's head is the one point every write transaction with events passes through: each append
 * locks it, reads it and inserts its events (several to a statement) just before its commit.
 */
describe.each(DATABASE_KINDS)('the audit chain head under many writers on %s', (kind) => {
  let stores: TestStores[];
  beforeEach(async () => {
    const first = await openTestStores(kind);
    stores = [first];
    for (let i = 1; i < WRITERS; i += 1) stores.push(await first.another());
  });
  afterEach(async () => stores[0]?.close());

  it('many processes appending batches of every size at once leave one verifying chain with no gap', async () => {
    const sizes = [1, 2, 3, 7, EVENTS_PER_INSERT + 3];
    const appended = await Promise.all(
      stores.flatMap((s, writer) =>
        sizes.map(async (n, round) => {
          await s.stores.approvals.recordAudit(events(writer, round, n));
          return n;
        }),
      ),
    );
    const total = appended.reduce((a, b) => a + b, 0);
    const chain = await stores[0]?.stores.auditQueries.chain();
    expect(chain?.map((e) => e.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(verifyChain(chain ?? [])).toMatchObject({ ok: true, count: total });
    // Each batch is contiguous: nobody's events interleave with another transaction's.
    const batches = new Set(chain?.map((e) => JSON.stringify([e.actor, e.payload.round])));
    expect(batches.size).toBe(WRITERS * sizes.length);
    let runs = 1;
    for (let i = 1; i < (chain?.length ?? 0); i += 1)
      if (
        chain?.[i]?.actor !== chain?.[i - 1]?.actor ||
        chain?.[i]?.payload.round !== chain?.[i - 1]?.payload.round
      )
        runs += 1;
    expect(runs).toBe(WRITERS * sizes.length);
  });

  it('a batch that fails in its last insert leaves nothing of itself, and the chain goes on from its head', async () => {
    const [a, b] = stores;
    if (!a || !b) throw new Error('two processes expected');
    await a.stores.approvals.recordAudit(events(0, 0, 2));
    // Three inserts; the last one's final row breaks a constraint, after two inserts of this batch succeeded.
    const broken = events(1, 1, 2 * EVENTS_PER_INSERT + 1).map((e, i, all) =>
      i === all.length - 1 ? { ...e, actor: null as unknown as string } : e,
    );
    await expect(b.db.write(() => audit(broken))).rejects.toThrow();
    await Promise.all([
      a.stores.approvals.recordAudit(events(0, 2, 3)),
      b.stores.approvals.recordAudit(events(1, 3, 4)),
    ]);
    const chain = (await a.stores.auditQueries.chain()) ?? [];
    expect(chain.map((e) => e.seq)).toEqual(Array.from({ length: 9 }, (_, i) => i + 1));
    expect(verifyChain(chain)).toMatchObject({ ok: true, count: 9 });
    expect(chain.some((e) => e.payload.round === 1)).toBe(false);
  });
});
