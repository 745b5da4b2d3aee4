import { sql } from 'drizzle-orm';
import type { HomeViewerStore } from '../approvals/home-viewers.js';
import { readNumber, readString } from './sql/columns.js';
import { count, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

export function createHomeViewerStore({ db }: StoreContext): HomeViewerStore {
  return {
    remember({ teamId, userId, auditor }, at, forgetBefore) {
      return db.write(function* () {
        yield* count(sql`insert into home_viewers (team_id, user_id, auditor, opened_at)
          values (${teamId}, ${userId}, ${auditor ? 1 : 0}, ${at})
          on conflict (team_id, user_id) do update set auditor = excluded.auditor, opened_at = excluded.opened_at`);
        if (forgetBefore !== undefined)
          yield* count(
            sql`delete from home_viewers where team_id = ${teamId} and opened_at < ${forgetBefore}`,
          );
      });
    },
    viewers: (teamId, window = { since: 0, limit: 1_000_000 }) =>
      db.read(function* () {
        const found = yield* rows(
          sql`select team_id, user_id, auditor from home_viewers
            where team_id = ${teamId} and opened_at >= ${window.since}
            order by opened_at desc, user_id limit ${window.limit}`,
        );
        return found.map((v) => ({
          teamId: readString(v, 'team_id'),
          userId: readString(v, 'user_id'),
          auditor: readNumber(v, 'auditor') === 1,
        }));
      }),
  };
}
