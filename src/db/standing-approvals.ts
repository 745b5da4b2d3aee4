import { and, desc, eq, isNull } from 'drizzle-orm';
import type { Clock, RunStore } from '../agent/ports.js';
import { toApprovalRecord } from './approval-rows.js';
import { appendAudit, type Tx } from './audit-writer.js';
import type { Db } from './database.js';
import { approvals, standingApprovals } from './schema.js';

/** Records "approve for this thread" inside the transaction of the decision that grants it. */
export function grantStanding(
  tx: Tx,
  approval: { id: string; conversationId: string; toolName: string },
  grantedBy: string,
  at: number,
): void {
  tx.insert(standingApprovals)
    .values({
      conversationId: approval.conversationId,
      toolName: approval.toolName,
      grantedBy,
      originApprovalId: approval.id,
      grantedAt: at,
    })
    .run();
}

/** The run-store methods behind standing approvals: looking one up and recording an automatic decision. */
export function createStandingApprovalStore(
  db: Db,
  clock: Clock,
): Pick<RunStore, 'standingApproval' | 'startAutoApproved'> {
  return {
    standingApproval(conversationId, toolName) {
      const row = db
        .select()
        .from(standingApprovals)
        .where(
          and(
            eq(standingApprovals.conversationId, conversationId),
            eq(standingApprovals.toolName, toolName),
            isNull(standingApprovals.revokedAt),
          ),
        )
        .orderBy(desc(standingApprovals.id))
        .get();
      return row ? { grantedBy: row.grantedBy, originApprovalId: row.originApprovalId } : undefined;
    },

    startAutoApproved({ run, turn, approval, grant, audit }) {
      const at = clock.now();
      return db.transaction(
        (tx) => {
          // Marked executing at once: the call runs right after this commit, and never twice.
          const created = tx
            .insert(approvals)
            .values({
              ...approval,
              rule: JSON.stringify(approval.rule),
              runId: run.id,
              conversationId: run.conversationId,
              teamId: run.teamId,
              turn,
              status: 'executing',
              requesterId: run.requesterId,
              decidedBy: grant.grantedBy,
              decidedAt: at,
              originApprovalId: grant.originApprovalId,
              channelId: run.channelId,
              threadTs: run.threadTs,
              createdAt: at,
              updatedAt: at,
            })
            .returning()
            .get();
          appendAudit(tx, audit);
          return toApprovalRecord(created);
        },
        { behavior: 'immediate' },
      );
    },
  };
}
