import { sql } from 'drizzle-orm';
import type { DedupeStore } from '../conversations/store-ports.js';
import { count } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/** Deliveries already handled, as rows: the primary key makes the first insert win, in any process. */
export function createDedupeStore({ db, clock }: StoreContext): DedupeStore {
  return {
    claim(keys) {
      const at = clock.now();
      return db.write(function* () {
        let fresh = true;
        for (const key of keys) {
          const inserted =
            yield* count(sql`insert into processed_events (key, created_at) values (${key}, ${at})
            on conflict do nothing`);
          if (inserted === 0) fresh = false;
        }
        return fresh;
      });
    },
    prune(before) {
      return db.write(function* () {
        yield* count(sql`delete from processed_events where created_at < ${before}`);
      });
    },
  };
}
