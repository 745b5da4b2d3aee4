import { sql } from 'drizzle-orm';
import type { ApprovalRecord } from '../approvals/approval.js';
import { escalationDue, nextReminderAt } from '../approvals/decision-rules.js';
import type { ApprovalTimerStore } from '../approvals/ports.js';
import { type AuditInput, SYSTEM_ACTOR } from '../audit/audit-event.js';
import type { SurfaceKind } from '../surfaces.js';
import { lockApproval, toApprovalRecord } from './approval-rows.js';
import { claimRunIfSettled, lockRunThenApproval } from './approval-store.js';
import { inRemovedWorkspaces } from './removed-scope.js';
import { oweCardRefresh } from './run-rows.js';
import { readString } from './sql/columns.js';
import { audit, count, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/**
 * Expiry and reminder deadlines on the approvals table. Each deadline is acted on in a transaction of its own
 * holding the request, with a compare-and-set on `pending`, so it fires once whatever the number of processes.
 */
export function createApprovalTimerStore(ctx: StoreContext): ApprovalTimerStore {
  const { db } = ctx;
  /** Marks each of `found` expired (`reason` kept with it) in a transaction of its own, claiming its run. */
  const expire = async (
    found: ReturnType<typeof pendingDue>,
    now: number,
    reason: string | null,
    events: (approval: ApprovalRecord) => AuditInput[],
  ) => {
    const due = await db.read(() => found);
    const expired: { approval: ApprovalRecord; runClaimed: boolean }[] = [];
    for (const approvalId of due) {
      const result = await db.write(function* () {
        const current = yield* lockRunThenApproval(ctx, approvalId);
        if (current.status !== 'pending') return undefined;
        const [updated] = yield* rows(sql`update approvals set status = 'expired', decided_at = ${now},
          reason = ${reason}, updated_at = ${now} where id = ${approvalId} and status = 'pending' returning *`);
        if (!updated) return undefined;
        const approval = toApprovalRecord(updated);
        yield* oweCardRefresh(ctx, approval, now);
        yield* audit(events(approval));
        return { approval, runClaimed: yield* claimRunIfSettled(ctx, approval, SYSTEM_ACTOR, now) };
      });
      if (result) expired.push(result);
    }
    return expired;
  };
  return {
    expireDue(now, surface, events) {
      return expire(
        pendingDue(surface, sql`a.expires_at is not null and a.expires_at <= ${now}`),
        now,
        null,
        events,
      );
    },

    expireWorkspace(scope, now, reason, events) {
      return expire(pendingDue('slack', inRemovedWorkspaces('a', scope)), now, reason, events);
    },

    async claimEscalations(now, surface, events) {
      const due = await db.read(function* () {
        // Only rules that escalate at all are read and parsed.
        const found =
          yield* rows(sql`select a.* from approvals a join conversations c on c.id = a.conversation_id
          where a.status = 'pending' and c.surface = ${surface} and a.rule like ${'%"escalateTo"%'}
          order by a.run_id, a.id`);
        return found
          .map(toApprovalRecord)
          .filter((approval) => escalationDue(approval, now))
          .map((approval) => approval.id);
      });
      const escalated: ApprovalRecord[] = [];
      for (const approvalId of due) {
        const approval = await db.write(function* () {
          const current = yield* lockApproval(db.dialect, approvalId);
          if (!current || !escalationDue(current, now)) return undefined;
          const rule = { ...current.rule, escalatedAt: now };
          const marked = yield* count(sql`update approvals set rule = ${JSON.stringify(rule)},
            updated_at = ${now} where id = ${approvalId} and status = 'pending'`);
          if (marked !== 1) return undefined;
          const updated = { ...current, rule };
          yield* audit(events(updated));
          return updated;
        });
        if (approval) escalated.push(approval);
      }
      return escalated;
    },

    async claimReminders(now, surface, events) {
      const due = await db.read(() =>
        pendingDue(surface, sql`a.remind_at is not null and a.remind_at <= ${now}`),
      );
      const claimed: ApprovalRecord[] = [];
      for (const approvalId of due) {
        const approval = await db.write(function* () {
          const current = yield* lockApproval(db.dialect, approvalId);
          if (current?.status !== 'pending') return undefined;
          const next = nextReminderAt(current.rule, now);
          // Moved on with a compare-and-set: a second process reading the same deadline finds it gone.
          const moved = yield* count(sql`update approvals set remind_at = ${next},
            updated_at = ${now} where id = ${approvalId} and status = 'pending' and remind_at <= ${now}`);
          if (moved !== 1 || next === null) return undefined;
          yield* audit(events(current));
          return current;
        });
        if (approval) claimed.push(approval);
      }
      return claimed;
    },
  };
}

/** Pending requests of the surface's conversations whose deadline (`passed`) has come, by run. */
function* pendingDue(surface: SurfaceKind, passed: ReturnType<typeof sql>) {
  const found = yield* rows(sql`select a.id from approvals a join conversations c on c.id = a.conversation_id
    where a.status = 'pending' and c.surface = ${surface} and ${passed} order by a.run_id, a.id`);
  return found.map((r) => readString(r, 'id'));
}
