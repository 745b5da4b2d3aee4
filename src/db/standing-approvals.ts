import { and, desc, eq, isNull } from 'drizzle-orm';
import type { RunStore } from '../agent/ports.js';
import type { Tx } from './audit-writer.js';
import type { Db } from './database.js';
import { standingApprovals } from './schema.js';

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

/** The run-store method behind standing approvals: the conversation's grant for a tool, if any. */
export function createStandingApprovalStore(db: Db): Pick<RunStore, 'standingApproval'> {
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
  };
}
