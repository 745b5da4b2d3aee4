import { sql } from 'drizzle-orm';
import { z } from 'zod';
import type { ApprovalClick, InboxClick, RequestLedger } from '../approvals/click-inbox.js';
import { leaseColumns, takableLease } from './run-rows.js';
import { readString } from './sql/columns.js';
import { count, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/** A click as stored (JSON written by `accept`, read back as data from outside the process). */
const storedClick = z.object({
  value: z.string().optional(),
  standing: z.boolean(),
  userId: z.string(),
  teamId: z.string().optional(),
  enterpriseId: z.string().optional(),
  channelId: z.string().optional(),
  messageTs: z.string().optional(),
  threadTs: z.string().optional(),
});

/** Rows of one insert: 5 parameters each, far under either engine's limit. */
const REQUESTS_PER_INSERT = 500;

/** Undecided clicks are kept this long at most: past it, a click nobody could decide is given up. */
const UNDECIDED_KEEP_MS = 86_400_000;

/**
 * Accepted requests as rows of `accepted_requests`: the primary key makes the first insert of a key win, in any
 * process, and a click's row is its inbox entry until it is decided (leased like a run, so a process that
 * dies leaves it to another).
 */
export function createRequestLedger(ctx: StoreContext): RequestLedger {
  const { db, clock } = ctx;
  return {
    accept(requests) {
      const at = clock.now();
      return db.write(function* () {
        // One insert for the requests that arrive together (a round trip each on PostgreSQL, all of them
        // before any of their answers); the keys it returns are the ones this call accepted first.
        const accepted = new Set<string>();
        for (let from = 0; from < requests.length; from += REQUESTS_PER_INSERT) {
          const values = requests.slice(from, from + REQUESTS_PER_INSERT).map(({ key, click }) => {
            const lease = click
              ? sql`${JSON.stringify(click)}, ${ctx.owner}, ${at + ctx.leaseMs}`
              : sql`null, null, null`;
            return sql`(${key}, ${at}, ${lease})`;
          });
          const inserted = yield* rows(sql`insert into accepted_requests
            (key, accepted_at, click, lease_owner, lease_until) values ${sql.join(values, sql`, `)}
            on conflict do nothing returning key`);
          for (const row of inserted) accepted.add(readString(row, 'key'));
        }
        // A key given twice in one call is fresh once, the first time, as inserts one after another would be.
        return requests.map(({ key }) => accepted.delete(key));
      });
    },

    forget(key) {
      return db.write(function* () {
        yield* count(sql`delete from accepted_requests where key = ${key} and click is null`);
      });
    },

    clickDecided(key) {
      const at = clock.now();
      return db.write(function* () {
        yield* count(sql`update accepted_requests set decided_at = ${at}, lease_owner = null, lease_until = null
          where key = ${key} and decided_at is null`);
      });
    },

    takeOverdueClicks(limit) {
      const at = clock.now();
      return db.write(function* () {
        const takable = yield* takableLease(ctx, 'accepted_requests', at, { as: 'r' });
        const taken = yield* rows(sql`update accepted_requests set ${leaseColumns(ctx, at)}
          where key in (select r.key from accepted_requests r
            where r.click is not null and r.decided_at is null and ${takable}
            order by r.accepted_at limit ${limit} ${ctx.db.dialect.forUpdateSkipLocked})
          returning key, click`);
        return taken.flatMap((row): InboxClick[] => {
          const click = parseClick(readString(row, 'click'));
          return click ? [{ key: readString(row, 'key'), click }] : [];
        });
      });
    },

    prune(before) {
      return db.write(function* () {
        yield* count(sql`delete from accepted_requests where accepted_at < ${before}
          and (click is null or decided_at is not null or accepted_at < ${before - UNDECIDED_KEEP_MS})`);
      });
    },
  };
}

/** The stored click, or undefined when the row holds something else (only a tampered row). */
function parseClick(text: string): ApprovalClick | undefined {
  try {
    const parsed = storedClick.safeParse(JSON.parse(text));
    if (!parsed.success) return undefined;
    const { value, teamId, enterpriseId, channelId, messageTs, threadTs, standing, userId } = parsed.data;
    return { value, standing, userId, teamId, enterpriseId, channelId, messageTs, threadTs };
  } catch {
    return undefined;
  }
}
