import { sql } from 'drizzle-orm';
import { adminChangeEvent, changedAdmins, type TeamAdminStore } from '../approvals/team-admins.js';
import { readString } from './sql/columns.js';
import { audit, count, type Program, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/** The workspace's listed admins, else the person who installed the app there (none when nobody is known). */
function* adminsOf(teamId: string): Program<string[]> {
  const listed = yield* rows(sql`select user_id from team_admins where team_id = ${teamId}
    order by added_at, user_id`);
  if (listed.length > 0) return listed.map((r) => readString(r, 'user_id'));
  const installer = yield* rows(sql`select installer_user_id from slack_installations
    where team_id = ${teamId} and installer_user_id is not null order by updated_at desc limit 1`);
  return installer.map((r) => readString(r, 'installer_user_id'));
}

/** Each workspace's admins (OAuth mode), a change and its audit event in one transaction. */
export function createTeamAdminStore({ db }: StoreContext): TeamAdminStore {
  return {
    adminsOf: (teamId) => db.read(() => adminsOf(teamId)),
    change(change) {
      return db.write(function* () {
        const current = yield* adminsOf(change.teamId);
        const result = changedAdmins(current, change);
        if (!result.ok) return result;
        // The first change writes the installer into the list, so that they stay an admin after it (listed
        // first: a millisecond before the change).
        const seeded = yield* rows(
          sql`select user_id from team_admins where team_id = ${change.teamId} limit 1`,
        );
        if (seeded.length === 0)
          for (const userId of current)
            yield* count(sql`insert into team_admins (team_id, user_id, added_by, added_at)
              values (${change.teamId}, ${userId}, 'install', ${change.at - 1})`);
        yield* count(
          change.action === 'add'
            ? sql`insert into team_admins (team_id, user_id, added_by, added_at)
                values (${change.teamId}, ${change.userId}, ${change.by}, ${change.at})`
            : sql`delete from team_admins where team_id = ${change.teamId} and user_id = ${change.userId}`,
        );
        yield* audit([adminChangeEvent(change)]);
        return result;
      });
    },
  };
}
