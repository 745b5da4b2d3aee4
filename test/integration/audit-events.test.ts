import { describe, expect, it } from 'vitest';
import { verifyChain } from '../../src/audit/verify-chain.js';
import { createApprovalTimerStore } from '../../src/db/approval-timer-store.js';
import { createAuditQueryStore } from '../../src/db/audit-query-store.js';
import { openDatabase } from '../../src/db/database.js';
import { approvals, runs } from '../../src/db/schema.js';
import { seedApproval } from '../support/audit-seed.js';

describe('audit events written with the state change', () => {
  it('an expiry that settles the paused turn records run.resumed by the system with the claim', () => {
    const database = openDatabase(':memory:');
    const id = seedApproval(database.db, { toolName: 'delete_note', createdAt: 1000 });
    database.db.update(approvals).set({ expiresAt: 2000 }).run();
    database.db
      .insert(runs)
      .values({
        id: `run_${id}`,
        conversationId: `conv_${id}`,
        status: 'paused',
        state: '{}',
        schemaVersion: 1,
        turn: 1,
        requesterId: 'U1',
        createdAt: 1000,
        updatedAt: 1000,
      })
      .run();
    const expired = createApprovalTimerStore(database.db).expireDue(3000, () => []);
    expect(expired).toHaveLength(1);
    const events = createAuditQueryStore(database.db).chain();
    expect(verifyChain(events).ok).toBe(true);
    expect(events.find((e) => e.kind === 'run.resumed')).toMatchObject({
      actor: 'system',
      runId: `run_${id}`,
      approvalId: id,
      at: 3000,
    });
    database.close();
  });
});
