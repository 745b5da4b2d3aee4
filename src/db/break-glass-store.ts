import { sql } from 'drizzle-orm';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { BreakGlassStore } from '../approvals/break-glass.js';
import { AppError } from '../errors.js';
import { approvalById, toApprovalRecord } from './approval-rows.js';
import { audit, type Program, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/** Break-glass approvals: their acknowledgement (a compare-and-set) and those still unacknowledged. */
export function createBreakGlassStore({ db }: StoreContext): BreakGlassStore {
  return {
    get: (approvalId) => db.read(() => approvalById(approvalId)),

    acknowledge: ({ approvalId, userId, at, audit: events }) =>
      db.write(function* () {
        const [updated] = yield* rows(sql`update approvals set break_glass_acked_by = ${userId},
            break_glass_acked_at = ${at}, updated_at = ${at}
          where id = ${approvalId} and break_glass_by is not null and break_glass_acked_by is null
          returning *`);
        if (updated) {
          yield* audit(events);
          return { kind: 'acknowledged' as const, approval: toApprovalRecord(updated) };
        }
        const current = yield* approvalById(approvalId);
        if (!current) throw new AppError('approval.not_found', `Approval ${approvalId} not found`);
        return { kind: 'already_acknowledged' as const, approval: current };
      }),

    unacknowledged: (teamId) => db.read(() => unacknowledgedBreakGlass(teamId)),
  };
}

/** Break-glass approvals nobody acknowledged yet, oldest decision first (of one workspace when `teamId` is given). */
export function* unacknowledgedBreakGlass(teamId?: string): Program<ApprovalRecord[]> {
  const team = teamId === undefined ? sql`` : sql`and team_id = ${teamId}`;
  const found = yield* rows(sql`select * from approvals
    where break_glass_by is not null and break_glass_acked_by is null ${team}
    order by decided_at, id`);
  return found.map(toApprovalRecord);
}
