import { and, eq, isNotNull, lte, ne, type SQL } from 'drizzle-orm';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { ApprovalTimerStore } from '../approvals/ports.js';
import { SYSTEM_ACTOR } from '../audit/audit-event.js';
import { toApprovalRecord } from './approval-rows.js';
import { claimRunIfSettled } from './approval-store.js';
import { appendAudit, type Tx } from './audit-writer.js';
import type { Db } from './database.js';
import { approvals } from './schema.js';

/** Expiry and reminder deadlines on the approvals table; every change is a compare-and-set on `pending`. */
/**
 * `skipTeamId`: requests of that workspace are left to whoever serves it (the Slack bot leaves terminal
 * conversations, which cannot be told in Slack, to the terminal chat).
 */
export function createApprovalTimerStore(db: Db, skipTeamId?: string): ApprovalTimerStore {
  const served = skipTeamId === undefined ? undefined : ne(approvals.teamId, skipTeamId);
  return {
    expireDue(now, audit) {
      return db.transaction(
        (tx) => {
          const due = pendingDue(tx, approvals.expiresAt, now, served);
          const expired: { approval: ApprovalRecord; runClaimed: boolean }[] = [];
          for (const row of due) {
            const updated = tx
              .update(approvals)
              .set({ status: 'expired', decidedAt: now, updatedAt: now })
              .where(and(eq(approvals.id, row.id), eq(approvals.status, 'pending')))
              .returning()
              .get();
            if (!updated) continue;
            const approval = toApprovalRecord(updated);
            appendAudit(tx, audit(approval));
            expired.push({ approval, runClaimed: claimRunIfSettled(tx, updated, SYSTEM_ACTOR, now) });
          }
          return expired;
        },
        { behavior: 'immediate' },
      );
    },

    claimReminders(now, audit) {
      return db.transaction(
        (tx) => {
          const due = tx
            .select()
            .from(approvals)
            .where(
              and(
                eq(approvals.status, 'pending'),
                isNotNull(approvals.remindAt),
                lte(approvals.remindAt, now),
                served,
              ),
            )
            .all();
          const claimed: ApprovalRecord[] = [];
          for (const row of due) {
            const approval = toApprovalRecord(row);
            const period = approval.rule.remindAfterMs;
            const { changes } = tx
              .update(approvals)
              .set({ remindAt: period ? now + period : null, updatedAt: now })
              .where(
                and(
                  eq(approvals.id, row.id),
                  eq(approvals.status, 'pending'),
                  eq(approvals.remindAt, row.remindAt ?? -1),
                ),
              )
              .run();
            if (changes !== 1 || !period) continue;
            appendAudit(tx, audit(approval));
            claimed.push(approval);
          }
          return claimed;
        },
        { behavior: 'immediate' },
      );
    },
  };
}

/** Pending approvals whose `deadline` column is set and not after `now`. */
function pendingDue(
  tx: Tx,
  deadline: typeof approvals.expiresAt | typeof approvals.remindAt,
  now: number,
  served: SQL | undefined,
) {
  return tx
    .select()
    .from(approvals)
    .where(and(eq(approvals.status, 'pending'), isNotNull(deadline), lte(deadline, now), served))
    .all();
}
