import { sql } from 'drizzle-orm';
import {
  adminChangeEvent,
  adminsFrom,
  adminsToList,
  changedAdmins,
  type Installers,
  type TeamAdminStore,
} from '../approvals/team-admins.js';
import { readString } from './sql/columns.js';
import { audit, count, type Program, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

/** The workspace's listed admins, in the order they were added. */
function* listedAdmins(teamId: string): Program<string[]> {
  const listed = yield* rows(sql`select user_id from team_admins where team_id = ${teamId}
    order by added_at, user_id`);
  return listed.map((r) => readString(r, 'user_id'));
}

/** The person who last installed the app in the workspace itself, when known. */
function* workspaceInstaller(teamId: string): Program<string | undefined> {
  const found = yield* rows(sql`select installer_user_id from slack_installations
    where team_id = ${teamId} and installer_user_id is not null order by updated_at desc limit 1`);
  return found.map((r) => readString(r, 'installer_user_id'))[0];
}

/** The person who installed the app for the whole organisation (its org-wide install), when known. */
function* organisationInstaller(enterpriseId: string | undefined): Program<string | undefined> {
  if (enterpriseId === undefined) return undefined;
  const found = yield* rows(sql`select installer_user_id from slack_installations
    where enterprise_id = ${enterpriseId} and enterprise_install = 1 and installer_user_id is not null
    order by updated_at desc limit 1`);
  return found.map((r) => readString(r, 'installer_user_id'))[0];
}

function* installersOf(teamId: string, enterpriseId: string | undefined): Program<Installers> {
  return {
    workspace: yield* workspaceInstaller(teamId),
    organisation: yield* organisationInstaller(enterpriseId),
  };
}

function* adminsOf(
  teamId: string,
  enterpriseId: string | undefined,
): Program<{ listed: string[]; current: string[] }> {
  const listed = yield* listedAdmins(teamId);
  return { listed, current: adminsFrom(listed, yield* installersOf(teamId, enterpriseId)) };
}

/** Each workspace's admins (OAuth mode), a change and its audit event in one transaction. */
export function createTeamAdminStore({ db }: StoreContext): TeamAdminStore {
  return {
    adminsOf: (teamId, enterpriseId) =>
      db.read(function* () {
        return (yield* adminsOf(teamId, enterpriseId)).current;
      }),
    change(change) {
      return db.write(function* () {
        const { listed, current } = yield* adminsOf(change.teamId, change.enterpriseId);
        const result = changedAdmins(current, change);
        if (!result.ok) return result;
        // Listed first: a millisecond before the change.
        for (const userId of adminsToList(listed, current))
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
