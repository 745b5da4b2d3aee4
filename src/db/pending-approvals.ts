import { and, asc, eq } from 'drizzle-orm';
import type { ApprovalRecord } from '../approvals/approval.js';
import { toApprovalRecord } from './approval-rows.js';
import type { Db } from './database.js';
import { approvals } from './schema.js';

/** The approvals of one conversation still waiting for a decision, oldest first. */
export function listPendingApprovals(db: Db, conversationId: string): ApprovalRecord[] {
  return db
    .select()
    .from(approvals)
    .where(and(eq(approvals.conversationId, conversationId), eq(approvals.status, 'pending')))
    .orderBy(asc(approvals.createdAt), asc(approvals.callId))
    .all()
    .map(toApprovalRecord);
}
