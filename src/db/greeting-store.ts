import { sql } from 'drizzle-orm';
import type { GreetingStore } from '../conversations/welcome-service.js';
import { count } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/** Greetings as rows: the unique index makes the first insert win, whatever the number of racing visits. */
export function createGreetingStore({ db }: StoreContext): GreetingStore {
  return {
    claim(teamId, userId, at) {
      return db.write(function* () {
        const inserted = yield* count(sql`insert into greeted_users (team_id, user_id, created_at)
          values (${teamId}, ${userId}, ${at}) on conflict do nothing`);
        return inserted === 1;
      });
    },
    release(teamId, userId) {
      return db.write(function* () {
        yield* count(sql`delete from greeted_users where team_id = ${teamId} and user_id = ${userId}`);
      });
    },
  };
}
