import { sql } from 'drizzle-orm';
import type { InstallationRecords, InstallationRow } from '../slack/installations/installation-records.js';
import { leaseColumns, takableLease } from './run-rows.js';
import { readNumber, readOptionalString, readString } from './sql/columns.js';
import { audit, count, type Row, row, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

function toInstallation(r: Row): InstallationRow {
  return {
    id: readString(r, 'id'),
    teamId: readOptionalString(r, 'team_id'),
    enterpriseId: readOptionalString(r, 'enterprise_id'),
    enterpriseInstall: readNumber(r, 'enterprise_install') === 1,
    installerUserId: readOptionalString(r, 'installer_user_id'),
    botUserId: readOptionalString(r, 'bot_user_id'),
    sealed: readString(r, 'sealed'),
    installedAt: readNumber(r, 'installed_at'),
    updatedAt: readNumber(r, 'updated_at'),
  };
}

/** The app's installations (OAuth mode), each write with its audit events in one transaction. */
export function createInstallationRecords(ctx: StoreContext): InstallationRecords {
  const { db, clock } = ctx;
  return {
    save(i, events) {
      return db.write(function* () {
        yield* count(sql`delete from slack_installations where id = ${i.id}`);
        yield* count(sql`insert into slack_installations (id, team_id, enterprise_id, enterprise_install,
          installer_user_id, bot_user_id, sealed, installed_at, updated_at)
          values (${i.id}, ${i.teamId}, ${i.enterpriseId}, ${i.enterpriseInstall ? 1 : 0}, ${i.installerUserId},
          ${i.botUserId}, ${i.sealed}, ${i.installedAt}, ${i.updatedAt})`);
        yield* audit(events);
      });
    },
    find: (id) =>
      db.read(function* () {
        const found = yield* row(sql`select * from slack_installations where id = ${id}`);
        return found ? toInstallation(found) : undefined;
      }),
    remove(id, events) {
      return db.write(function* () {
        const removed = yield* count(sql`delete from slack_installations where id = ${id}`);
        if (removed > 0) yield* audit(events);
        return removed > 0;
      });
    },
    all: () =>
      db.read(function* () {
        return (yield* rows(sql`select * from slack_installations order by id`)).map(toInstallation);
      }),
    reseal(id, was, sealed, at) {
      return db.write(function* () {
        const changed = yield* count(sql`update slack_installations set sealed = ${sealed}, updated_at = ${at}
          where id = ${id} and sealed = ${was}`);
        return changed > 0;
      });
    },
    claimRefresh: (id) =>
      db.write(function* () {
        const at = clock.now();
        const takable = yield* takableLease(ctx, 'slack_installations', at);
        return (
          (yield* count(sql`update slack_installations set ${leaseColumns(ctx, at)}
            where id = ${id} and ${takable}`)) > 0
        );
      }),
    refreshed: (id, was, sealed, at, events) =>
      db.write(function* () {
        const changed =
          yield* count(sql`update slack_installations set sealed = ${sealed}, updated_at = ${at},
          lease_owner = null, lease_until = null where id = ${id} and sealed = ${was}`);
        if (changed > 0) yield* audit(events);
        return changed > 0;
      }),
    releaseRefresh: (id) =>
      db.write(function* () {
        yield* count(sql`update slack_installations set lease_owner = null, lease_until = null
          where id = ${id} and lease_owner = ${ctx.owner}`);
      }),
  };
}
