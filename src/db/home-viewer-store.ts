import { sql } from 'drizzle-orm';
import type { HomeViewerStore } from '../approvals/home-viewers.js';
import { readNumber, readString } from './sql/columns.js';
import { count, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

export function createHomeViewerStore({ db }: StoreContext): HomeViewerStore {
  return {
    remember({ teamId, userId, auditor }, at) {
      return db.write(function* () {
        yield* count(sql`insert into home_viewers (team_id, user_id, auditor, opened_at)
          values (${teamId}, ${userId}, ${auditor ? 1 : 0}, ${at})
          on conflict (team_id, user_id) do update set auditor = excluded.auditor, opened_at = excluded.opened_at`);
      });
    },
    viewers: (teamId) =>
      db.read(function* () {
        const found = yield* rows(
          sql`select team_id, user_id, auditor from home_viewers where team_id = ${teamId}`,
        );
        return found.map((v) => ({
          teamId: readString(v, 'team_id'),
          userId: readString(v, 'user_id'),
          auditor: readNumber(v, 'auditor') === 1,
        }));
      }),
  };
}
