import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { verifyChain } from '../../src/audit/verify-chain.js';
import { count } from '../../src/db/sql/program.js';
import { seedApproval } from '../support/audit-seed.js';
import { openTestStores, type TestStores } from '../support/test-database.js';

describe('audit events written with the state change', () => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores('sqlite');
  });
  afterEach(() => t.close());

  it('an expiry that settles the paused turn records run.resumed by the system with the claim', async () => {
    const { db, stores } = t;
    const id = await seedApproval(db, { toolName: 'delete_note', createdAt: 1000 });
    await db.write(function* () {
      yield* count(sql`update approvals set expires_at = 2000 where id = ${id}`);
      yield* count(sql`insert into runs (id, conversation_id, status, state, schema_version, turn, requester_id,
          created_at, updated_at)
        values (${`run_${id}`}, ${`conv_${id}`}, 'paused', '{}', 1, 1, 'U1', 1000, 1000)`);
    });
    const expired = await stores.timers.expireDue(3000, 'slack', () => []);
    expect(expired).toHaveLength(1);
    expect(expired[0]?.runClaimed).toBe(true);
    const events = await stores.auditQueries.chain();
    expect(verifyChain(events).ok).toBe(true);
    expect(events.find((e) => e.kind === 'run.resumed')).toMatchObject({
      actor: 'system',
      runId: `run_${id}`,
      approvalId: id,
      at: 3000,
    });
  });
});
