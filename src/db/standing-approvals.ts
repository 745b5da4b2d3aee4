import { sql } from 'drizzle-orm';
import { standingRevokedEvent } from '../approvals/decision-rules.js';
import type { StandingApprovalStore } from '../approvals/ports.js';
import { approvalById } from './approval-rows.js';
import { readNumber, readString } from './sql/columns.js';
import { audit, row, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/** "Approve for this thread" grants: found by the runner, revoked by admins. */
export function createStandingApprovalStore({ db }: StoreContext): StandingApprovalStore {
  return {
    find: (conversationId, toolName) =>
      db.read(function* () {
        const found = yield* row(sql`select granted_by, origin_approval_id, granted_at from standing_approvals
          where conversation_id = ${conversationId} and tool_name = ${toolName} and revoked_at is null
          order by id desc limit 1`);
        if (!found) return undefined;
        return {
          grantedBy: readString(found, 'granted_by'),
          originApprovalId: readString(found, 'origin_approval_id'),
          grantedAt: readNumber(found, 'granted_at'),
        };
      }),

    revoke(input) {
      return db.write(function* () {
        const origin = yield* approvalById(input.approvalId);
        if (!origin || origin.teamId !== input.teamId) return { ok: false, reason: 'not_found' } as const;
        const [revoked] = yield* rows(sql`update standing_approvals set revoked_at = ${input.at}
          where origin_approval_id = ${input.approvalId} and revoked_at is null returning *`);
        if (!revoked) return { ok: false, reason: 'not_active' } as const;
        const grant = {
          toolName: readString(revoked, 'tool_name'),
          grantedBy: readString(revoked, 'granted_by'),
          conversationId: readString(revoked, 'conversation_id'),
        };
        yield* audit([standingRevokedEvent(grant, { ...input, enterpriseId: origin.enterpriseId })]);
        return { ok: true, ...grant } as const;
      });
    },
  };
}
