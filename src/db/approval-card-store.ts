import { asc, eq } from 'drizzle-orm';
import type { Clock } from '../agent/ports.js';
import type { ApprovalCardStore, ApprovalStore } from '../approvals/ports.js';
import { auditEvent } from '../audit/audit-event.js';
import { appendAudit } from './audit-writer.js';
import type { Db } from './database.js';
import { approvalCards } from './schema.js';

/** Every place an approval's card is shown, with what the card renders from. */
export function createApprovalCardStore(
  db: Db,
  clock: Clock,
  approvalsStore: Pick<ApprovalStore, 'get' | 'approvers'>,
): ApprovalCardStore {
  return {
    get: (approvalId) => approvalsStore.get(approvalId),
    approvers: (approvalId) => approvalsStore.approvers(approvalId),
    extraCards(approvalId) {
      return db
        .select({
          channelId: approvalCards.channelId,
          messageTs: approvalCards.messageTs,
          link: approvalCards.link,
        })
        .from(approvalCards)
        .where(eq(approvalCards.approvalId, approvalId))
        .orderBy(asc(approvalCards.createdAt))
        .all();
    },
    addExtraCard(approval, card) {
      const at = clock.now();
      db.transaction(
        (tx) => {
          tx.insert(approvalCards)
            .values({ approvalId: approval.id, ...card, createdAt: at })
            .onConflictDoNothing()
            .run();
          appendAudit(tx, [
            auditEvent('approval.card_posted', {
              at,
              teamId: approval.teamId,
              conversationId: approval.conversationId,
              runId: approval.runId,
              approvalId: approval.id,
              payload: { channelId: card.channelId, messageTs: card.messageTs, copy: true },
            }),
          ]);
        },
        { behavior: 'immediate' },
      );
    },
  };
}
