import { sql } from 'drizzle-orm';
import { approvalScope } from '../approvals/approval.js';
import type { ApprovalCardStore } from '../approvals/ports.js';
import { auditEvent } from '../audit/audit-event.js';
import { approvalById } from './approval-rows.js';
import { approversOf, votesOf } from './approval-store.js';
import { readOptionalString, readString } from './sql/columns.js';
import { audit, count, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/** Every place an approval's card is shown, with what the card renders from. */
export function createApprovalCardStore(ctx: StoreContext): ApprovalCardStore {
  const { db, clock } = ctx;
  return {
    get: (approvalId) => db.read(() => approvalById(approvalId)),
    approvers: (approvalId) => db.read(() => approversOf(approvalId)),
    extraCards: (approvalId) =>
      db.read(function* () {
        const found = yield* rows(sql`select channel_id, message_ts, link from approval_cards
          where approval_id = ${approvalId} order by created_at`);
        return found.map((card) => ({
          channelId: readString(card, 'channel_id'),
          messageTs: readString(card, 'message_ts'),
          link: readOptionalString(card, 'link'),
        }));
      }),
    delegatedVotes: (approvalId) =>
      db.read(function* () {
        const votes = yield* votesOf(approvalId);
        return Object.fromEntries(
          votes.flatMap((v) => (v.onBehalfOf === null ? [] : [[v.userId, v.onBehalfOf] as const])),
        );
      }),
    addExtraCard(approval, card) {
      const at = clock.now();
      return db.write(function* () {
        yield* count(sql`insert into approval_cards (approval_id, channel_id, message_ts, link, created_at)
          values (${approval.id}, ${card.channelId}, ${card.messageTs}, ${card.link}, ${at})
          on conflict do nothing`);
        yield* audit([
          auditEvent('approval.card_posted', {
            at,
            ...approvalScope(approval),
            payload: { channelId: card.channelId, messageTs: card.messageTs, copy: true },
          }),
        ]);
      });
    },
  };
}
