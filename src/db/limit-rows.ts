import { sql } from 'drizzle-orm';
import type { NewApproval } from '../agent/ports.js';
import { readableArguments } from '../agent/run-events.js';
import type { ApprovalRule } from '../approvals/approval.js';
import {
  judgeLimits,
  type LimitCheck,
  type LimitVerdict,
  longestWindow,
} from '../approvals/approval-limits.js';
import { type LimitAuditScope, limitedAudit, limitOutcome } from '../approvals/limit-outcome.js';
import type { AuditInput } from '../audit/audit-event.js';
import { readNumber, readString } from './sql/columns.js';
import { count, type Program, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/**
 * Locks the limit keys of a turn's requests, in one order for every process (so two turns never wait on each
 * other's keys crosswise). On PostgreSQL the key rows stay locked until the transaction ends: a competing turn
 * counts only after this one recorded its requests. SQLite's write transaction holds the whole database.
 */
export function* lockLimitKeys(ctx: StoreContext, approvals: readonly NewApproval[]): Program<void> {
  const keys = [...new Set(approvals.flatMap((a) => (a.limits ?? []).map((check) => check.key)))].sort();
  for (const key of keys) {
    yield* count(sql`insert into approval_limit_keys (key) values (${key}) on conflict (key) do nothing`);
    yield* rows(sql`select key from approval_limit_keys where key = ${key} ${ctx.db.dialect.forUpdate}`);
  }
}

/** What a request becomes once its limits are counted (the keys must be locked already). */
export interface CountedRequest {
  rule: ApprovalRule;
  automatic: NewApproval['automatic'];
  /** Set when a limit refused it: stored `cancelled` with this reason. */
  refusedReason: string | null;
  /** The audit events that replace those planned for it, when a limit changed its fate. */
  audit: AuditInput[] | undefined;
}

/** Counts a request against its limits; a request offered is recorded under each of its keys. */
export function* countRequest(approval: NewApproval, scope: LimitAuditScope): Program<CountedRequest> {
  const checks = approval.limits ?? [];
  const unchanged = {
    rule: approval.rule,
    automatic: approval.automatic,
    refusedReason: null,
    audit: undefined,
  };
  if (checks.length === 0) return unchanged;
  const verdict = yield* verdictOf(checks, scope.at);
  const outcome = limitOutcome(approval.toolName, approval.rule, verdict);
  const request = {
    approvalId: approval.id,
    tool: approval.toolName,
    callId: approval.callId,
    arguments: readableArguments(approval.arguments),
    agentChain: approval.agentChain,
  };
  switch (outcome.kind) {
    case 'within':
      for (const key of new Set(checks.map((check) => check.key)))
        yield* count(sql`insert into approval_limit_uses (key, approval_id, at)
          values (${key}, ${approval.id}, ${scope.at})`);
      return unchanged;
    case 'refused':
      return {
        rule: outcome.rule,
        automatic: undefined,
        refusedReason: outcome.reason,
        audit: limitedAudit(scope, request, outcome),
      };
    case 'admins':
      return {
        rule: outcome.rule,
        automatic: undefined,
        refusedReason: null,
        audit: limitedAudit(scope, request, outcome),
      };
  }
}

function* verdictOf(checks: readonly LimitCheck[], now: number): Program<LimitVerdict> {
  const keys = sql.join(
    [...new Set(checks.map((check) => check.key))].map((key) => sql`${key}`),
    sql`, `,
  );
  const since = now - longestWindow(checks);
  // Uses older than every window counting them count for nothing any more: they go, so a key keeps a window's
  // worth of rows, not one for every request ever limited. (Every limit of a key is among `checks`: a key
  // names its rule.)
  yield* count(sql`delete from approval_limit_uses where key in (${keys}) and at <= ${since}`);
  const found = yield* rows(
    sql`select key, at from approval_limit_uses where key in (${keys}) and at > ${since}`,
  );
  const uses = new Map<string, number[]>();
  for (const use of found) {
    const key = readString(use, 'key');
    uses.set(key, [...(uses.get(key) ?? []), readNumber(use, 'at')]);
  }
  return judgeLimits(checks, uses, now);
}
