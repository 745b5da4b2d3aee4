import { type SQL, sql } from 'drizzle-orm';
import { UNFINISHED_RUN_STATUSES } from '../agent/ports.js';
import { OPEN_APPROVAL_STATUSES } from '../approvals/approval.js';
import { auditEvent } from '../audit/audit-event.js';
import {
  CONTENT_KEYS,
  type Pace,
  type PruneMark,
  prunedArgumentsMarker,
  prunePayload,
  type RetentionStore,
} from '../audit/retention.js';
import { readNumber, readString } from './sql/columns.js';
import { audit, count, row, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/** Rows deleted or pruned per transaction, so the bot's own writes wait little. */
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

/**
 * Retention over both engines: history deleted, approvals' and audit payloads' content replaced, `batch` rows
 * per transaction.
 */
export function createRetentionStore(ctx: StoreContext, batch = BATCH): RetentionStore {
  const { db } = ctx;
  /**
   * Changes the rows `select` finds past a key (from `start`, below every key), `batch` at a time in key order
   * (each batch a transaction of its own, going on from the last key it saw): the rows changed in all.
   */
  async function inBatches(
    start: string | number,
    select: (from: string | number) => SQL,
    change: (ids: SQL) => SQL,
    pace: Pace,
  ): Promise<number> {
    let total = 0;
    let from = start;
    for (;;) {
      const after = from;
      const started = performance.now();
      const step = await db.write(function* () {
        const found = (yield* rows(select(after))).map((r) => r.id as string | number);
        if (found.length === 0) return { changed: 0, last: after, seen: 0 };
        const changed = yield* count(
          change(
            sql.join(
              found.map((id) => sql`${id}`),
              sql`, `,
            ),
          ),
        );
        return { changed, last: found.at(-1) ?? after, seen: found.length };
      });
      total += step.changed;
      from = step.last;
      if (step.seen < batch) return total;
      await pace(performance.now() - started);
    }
  }
  const hasContent = sql.join(
    CONTENT_KEYS.map((key) => sql`payload like ${`%"${key}":%`}`),
    sql` or `,
  );
  return {
    async prune(before, mark: PruneMark, pace: Pace = async () => {}) {
      const activeRuns = await db.read(function* () {
        const found = yield* row(sql`select count(*) as n from runs where status in (${KEPT_RUN_STATUSES})`);
        return found ? readNumber(found, 'n') : 0;
      });
      // Deletes and updates a batch at a time in key order, each batch its own short transaction followed by
      // `pace`: the bot's own writes (a click's decision) wait for one batch at most, never for the whole prune.
      const items = await inBatches(
        0,
        (from) =>
          sql`select id from conversation_items where id > ${from} and created_at < ${before}
          and conversation_id not in (${ACTIVE_CONVERSATIONS})
          and (run_id is null or run_id in
            (select id from runs where status not in (${KEPT_RUN_STATUSES}) and updated_at < ${before}))
          order by id limit ${batch}`,
        (ids) => sql`delete from conversation_items where id in (${ids})`,
        pace,
      );
      const marker = prunedArgumentsMarker(mark);
      const approvals = await inBatches(
        '',
        (from) =>
          sql`select id from approvals where id > ${from} and updated_at < ${before}
          and status not in (${KEPT_APPROVAL_STATUSES})
          and run_id not in (${ACTIVE_RUNS}) and arguments not like ${'{"$pruned":%'}
          order by id limit ${batch}`,
        (ids) => sql`update approvals set arguments = ${marker},
          edited_arguments = null, result = null, reason = null, preview = null where id in (${ids})`,
        pace,
      );
      let events = 0;
      for (let after = 0; ; ) {
        const from = after;
        const started = performance.now();
        const step = await db.write(function* () {
          const found = yield* rows(sql`select seq, payload from audit_events
            where chain_version = 2 and at < ${before} and seq > ${from}
              and (run_id is null or run_id not in (${ACTIVE_RUNS}))
              and (approval_id is null or approval_id not in (${OPEN_APPROVALS}))
              and payload not like ${'%"$pruned":%'} and (${hasContent})
            order by seq limit ${batch}`);
          let changed = 0;
          for (const event of found) {
            const seq = readNumber(event, 'seq');
            let payload: unknown;
            try {
              payload = JSON.parse(readString(event, 'payload'));
            } catch {
              continue; // not JSON: a tampered row, which verify reports; left for it to find
            }
            if (payload === null || typeof payload !== 'object' || Array.isArray(payload)) continue;
            const pruned = prunePayload(payload as Record<string, unknown>, mark);
            if (!pruned) continue;
            changed += yield* count(sql`update audit_events set payload = ${JSON.stringify(pruned)}
              where seq = ${seq} and chain_version = 2`);
          }
          const last = found.at(-1);
          return { changed, last: last ? readNumber(last, 'seq') : from, done: found.length < batch };
        });
        events += step.changed;
        after = step.last;
        if (step.done) break;
        await pace(performance.now() - started);
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
