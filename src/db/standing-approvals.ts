import { and, desc, eq, isNull } from 'drizzle-orm';
import type { RunStore } from '../agent/ports.js';
import type { StandingApprovals } from '../approvals/ports.js';
import { type AuditInput, auditEvent } from '../audit/audit-event.js';
import { appendAudit, type Tx } from './audit-writer.js';
import type { Db } from './database.js';
import { approvals, standingApprovals } from './schema.js';

/**
 * Records "approve for this thread" inside the transaction of the decision that grants it; returns the audit
 * event for the caller to append in that transaction.
 */
export function grantStanding(
  tx: Tx,
  approval: { id: string; conversationId: string; toolName: string; teamId: string },
  grantedBy: string,
  at: number,
): AuditInput {
  tx.insert(standingApprovals)
    .values({
      conversationId: approval.conversationId,
      toolName: approval.toolName,
      grantedBy,
      originApprovalId: approval.id,
      grantedAt: at,
    })
    .run();
  return auditEvent('standing.granted', {
    at,
    actor: grantedBy,
    teamId: approval.teamId,
    conversationId: approval.conversationId,
    approvalId: approval.id,
    payload: { tool: approval.toolName },
  });
}

/** Admins revoke a grant by the id of the request whose decision made it. */
export function createStandingApprovals(db: Db): StandingApprovals {
  return {
    revoke({ teamId, approvalId, userId, at }) {
      return db.transaction(
        (tx) => {
          const origin = tx.select().from(approvals).where(eq(approvals.id, approvalId)).get();
          if (!origin || origin.teamId !== teamId) return { ok: false, reason: 'not_found' } as const;
          const revoked = tx
            .update(standingApprovals)
            .set({ revokedAt: at })
            .where(
              and(eq(standingApprovals.originApprovalId, approvalId), isNull(standingApprovals.revokedAt)),
            )
            .returning()
            .get();
          if (!revoked) return { ok: false, reason: 'not_active' } as const;
          appendAudit(tx, [
            auditEvent('standing.revoked', {
              at,
              actor: userId,
              teamId,
              conversationId: revoked.conversationId,
              approvalId,
              payload: { tool: revoked.toolName, grantedBy: revoked.grantedBy },
            }),
          ]);
          return {
            ok: true,
            toolName: revoked.toolName,
            grantedBy: revoked.grantedBy,
            conversationId: revoked.conversationId,
          } as const;
        },
        { behavior: 'immediate' },
      );
    },
  };
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
