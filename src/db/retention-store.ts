import { sql } from 'drizzle-orm';
import { UNFINISHED_RUN_STATUSES } from '../agent/ports.js';
import { OPEN_APPROVAL_STATUSES } from '../approvals/approval.js';
import { auditEvent } from '../audit/audit-event.js';
import {
  CONTENT_KEYS,
  type PruneMark,
  prunedArgumentsMarker,
  prunePayload,
  type RetentionStore,
} from '../audit/retention.js';
import { readNumber, readString } from './sql/columns.js';
import { audit, count, row, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/** Events pruned per transaction, so the bot's own writes wait little. */
const BATCH = 500;

/** The statuses as an SQL list: `'a', 'b'`. */
const sqlList = (values: readonly string[]) =>
  sql.join(
    values.map((value) => sql`${value}`),
    sql`, `,
  );

/** Runs and approvals whose content is still needed (UNFINISHED_RUN_STATUSES, OPEN_APPROVAL_STATUSES). */
const KEPT_RUN_STATUSES = sqlList(UNFINISHED_RUN_STATUSES);
const KEPT_APPROVAL_STATUSES = sqlList(OPEN_APPROVAL_STATUSES);
const ACTIVE_RUNS = sql`select id from runs where status in (${KEPT_RUN_STATUSES})`;
const ACTIVE_CONVERSATIONS = sql`select conversation_id from runs where status in (${KEPT_RUN_STATUSES})`;
const OPEN_APPROVALS = sql`select id from approvals where status in (${KEPT_APPROVAL_STATUSES})`;

/** Retention over both engines: history deleted, approvals' and audit payloads' content replaced. */
export function createRetentionStore(ctx: StoreContext): RetentionStore {
  const { db } = ctx;
  const hasContent = sql.join(
    CONTENT_KEYS.map((key) => sql`payload like ${`%"${key}":%`}`),
    sql` or `,
  );
  return {
    async prune(before, mark: PruneMark) {
      const activeRuns = await db.read(function* () {
        const found = yield* row(sql`select count(*) as n from runs where status in (${KEPT_RUN_STATUSES})`);
        return found ? readNumber(found, 'n') : 0;
      });
      const items = await db.write(function* () {
        return yield* count(sql`delete from conversation_items where created_at < ${before}
          and conversation_id not in (${ACTIVE_CONVERSATIONS})
          and (run_id is null or run_id in
            (select id from runs where status not in (${KEPT_RUN_STATUSES}) and updated_at < ${before}))`);
      });
      const marker = prunedArgumentsMarker(mark);
      const approvals = await db.write(function* () {
        return yield* count(sql`update approvals set arguments = ${marker}, edited_arguments = null, result = null,
            reason = null, preview = null
          where updated_at < ${before} and status not in (${KEPT_APPROVAL_STATUSES})
            and run_id not in (${ACTIVE_RUNS}) and arguments not like ${'{"$pruned":%'}`);
      });
      let events = 0;
      for (let after = 0; ; ) {
        const from = after;
        const step = await db.write(function* () {
          const batch = yield* rows(sql`select seq, payload from audit_events
            where chain_version = 2 and at < ${before} and seq > ${from}
              and (run_id is null or run_id not in (${ACTIVE_RUNS}))
              and (approval_id is null or approval_id not in (${OPEN_APPROVALS}))
              and payload not like ${'%"$pruned":%'} and (${hasContent})
            order by seq limit ${BATCH}`);
          let changed = 0;
          for (const found of batch) {
            const seq = readNumber(found, 'seq');
            let payload: unknown;
            try {
              payload = JSON.parse(readString(found, 'payload'));
            } catch {
              continue; // not JSON: a tampered row, which verify reports; left for it to find
            }
            if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) continue;
            const pruned = prunePayload(payload as Record<string, unknown>, mark);
            if (!pruned) continue;
            changed += yield* count(sql`update audit_events set payload = ${JSON.stringify(pruned)}
              where seq = ${seq} and chain_version = 2`);
          }
          const last = batch.at(-1);
          return { changed, last: last ? readNumber(last, 'seq') : from, done: batch.length < BATCH };
        });
        events += step.changed;
        after = step.last;
        if (step.done) break;
      }
      return db.write(function* () {
        const old = yield* row(sql`select count(*) as n from audit_events where chain_version = 1
          and at < ${before}`);
        const report = {
          before,
          limit: mark.limit,
          events,
          keptVersion1: old ? readNumber(old, 'n') : 0,
          approvals,
          items,
          activeRuns,
        };
        yield* audit([
          auditEvent('audit.pruned', {
            at: mark.at,
            payload: { ...report, before: new Date(before).toISOString() },
          }),
        ]);
        return report;
      });
    },
  };
}
