import { and, asc, eq } from 'drizzle-orm';
import type { Clock } from '../agent/ports.js';
import type { ApprovalStore } from '../approvals/ports.js';
import { auditEvent } from '../audit/audit-event.js';
import { type ApprovalRow, toApprovalRecord } from './approval-rows.js';
import { appendAudit, type Tx } from './audit-writer.js';
import type { Db } from './database.js';
import { approvals, approvalVotes, runs } from './schema.js';
import { grantStanding } from './standing-approvals.js';

export function createApprovalStore(db: Db, clock: Clock): ApprovalStore {
  const approversOf = (tx: Tx, approvalId: string) =>
    tx
      .select({ userId: approvalVotes.userId })
      .from(approvalVotes)
      .where(and(eq(approvalVotes.approvalId, approvalId), eq(approvalVotes.vote, 'approve')))
      .orderBy(asc(approvalVotes.createdAt))
      .all()
      .map((row) => row.userId);

  return {
    get(approvalId) {
      const row = db.select().from(approvals).where(eq(approvals.id, approvalId)).get();
      return row ? toApprovalRecord(row) : undefined;
    },

    approvers: (approvalId) => approversOf(db, approvalId),

    vote({ approvalId, userId, vote, reason, standing, editedArguments, audit }) {
      const at = clock.now();
      return db.transaction(
        (tx) => {
          const row = tx.select().from(approvals).where(eq(approvals.id, approvalId)).get();
          if (!row) throw new Error(`Approval ${approvalId} not found`);
          if (row.status !== 'pending')
            return { kind: 'already_decided' as const, approval: toApprovalRecord(row) };
          const inserted = tx
            .insert(approvalVotes)
            .values({ approvalId, userId, vote, createdAt: at })
            .onConflictDoNothing()
            .run();
          if (inserted.changes === 0)
            return { kind: 'already_voted' as const, approval: toApprovalRecord(row) };
          const approvers = approversOf(tx, approvalId);
          const quorum = toApprovalRecord(row).rule.quorum;
          if (vote === 'approve' && approvers.length < quorum) {
            appendAudit(tx, audit);
            return { kind: 'counted' as const, approval: toApprovalRecord(row), approvers };
          }
          const decided = tx
            .update(approvals)
            .set({
              status: vote === 'approve' ? 'approved' : 'rejected',
              decidedBy: vote === 'approve' ? approvers.join(',') : userId,
              decidedAt: at,
              reason,
              ...(vote === 'approve' && editedArguments ? { editedArguments } : {}),
              updatedAt: at,
            })
            .where(and(eq(approvals.id, approvalId), eq(approvals.status, 'pending')))
            .returning()
            .get();
          if (!decided) throw new Error(`Approval ${approvalId} changed inside its transaction`);
          const granted = vote === 'approve' && standing ? [grantStanding(tx, decided, userId, at)] : [];
          appendAudit(tx, [...audit, ...granted]);
          const runClaimed = claimRunIfSettled(tx, decided, userId, at);
          return { kind: 'decided' as const, approval: toApprovalRecord(decided), runClaimed };
        },
        { behavior: 'immediate' },
      );
    },

    recordAudit(events) {
      db.transaction((tx) => appendAudit(tx, events), { behavior: 'immediate' });
    },
  };
}

/**
 * When no call of the paused turn is still pending, claims the run (paused -> running) with a compare-and-set,
 * so exactly one caller, whether a decision (`actor` the person) or an expiry (`system`), resumes it, and
 * records `run.resumed`. Call inside the settling transaction.
 */
export function claimRunIfSettled(tx: Tx, settled: ApprovalRow, actor: string, at: number): boolean {
  const { runId, turn } = settled;
  const stillPending = tx
    .select({ id: approvals.id })
    .from(approvals)
    .where(and(eq(approvals.runId, runId), eq(approvals.turn, turn), eq(approvals.status, 'pending')))
    .get();
  if (stillPending) return false;
  const claimed =
    tx
      .update(runs)
      .set({ status: 'running', updatedAt: at })
      .where(and(eq(runs.id, runId), eq(runs.status, 'paused')))
      .run().changes === 1;
  // The settling decision (or expiry) hands the run back to the runner: recorded with the claim.
  if (claimed) {
    appendAudit(tx, [
      auditEvent('run.resumed', {
        at,
        actor,
        teamId: settled.teamId,
        conversationId: settled.conversationId,
        runId,
        approvalId: settled.id,
        payload: { turn },
      }),
    ]);
  }
  return claimed;
}
