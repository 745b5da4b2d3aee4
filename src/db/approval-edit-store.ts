import { and, eq } from 'drizzle-orm';
import type { Clock } from '../agent/ports.js';
import type { ApprovalEditStore } from '../approvals/edit-arguments.js';
import { toApprovalRecord } from './approval-rows.js';
import { appendAudit } from './audit-writer.js';
import type { Db } from './database.js';
import { approvals } from './schema.js';

export function createApprovalEditStore(db: Db, clock: Clock): ApprovalEditStore {
  return {
    get(approvalId) {
      const row = db.select().from(approvals).where(eq(approvals.id, approvalId)).get();
      return row ? toApprovalRecord(row) : undefined;
    },
    setEditedArguments(approvalId, editedArguments, audit) {
      return db.transaction(
        (tx) => {
          const { changes } = tx
            .update(approvals)
            .set({ editedArguments, updatedAt: clock.now() })
            .where(and(eq(approvals.id, approvalId), eq(approvals.status, 'pending')))
            .run();
          if (changes === 1) appendAudit(tx, audit);
          return changes === 1;
        },
        { behavior: 'immediate' },
      );
    },
  };
}
