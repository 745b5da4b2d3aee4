import type { AdminChange } from '../approvals/team-admins.js';
import { openDatabase } from '../db/open-database.js';
import { createTeamAdminStore } from '../db/team-admin-store.js';
import { randomId } from '../ids.js';
import { silentLogger } from '../logger.js';
import { processOwnerId } from '../process-identity.js';
import { databaseConfigOf } from './audit-database.js';

const TEAM = /^[TE][A-Z0-9]{2,}$/;
const USER = /^[UW][A-Z0-9]{2,}$/;
const ENTERPRISE = /^E[A-Z0-9]{2,}$/;

/**
 * `admins --team T… [--enterprise E…] [--add U… | --remove U…]`: an operator lists or changes a workspace's
 * admins (installs into several workspaces), as its admins do with `/approvals admins`; `--enterprise` names the
 * workspace's Enterprise Grid organisation, whose org-wide installer counts as the workspace's installer. A
 * change is audited with actor `operator`. Exit 0 done, 2 a usage problem or a refused change (nothing changed).
 */
export async function adminsCommand(
  values: {
    team?: string | undefined;
    enterprise?: string | undefined;
    add?: string | undefined;
    remove?: string | undefined;
  },
  env: NodeJS.ProcessEnv,
  io: { out(line: string): void; err(line: string): void },
): Promise<number> {
  const { team, enterprise, add, remove } = values;
  if (!team || !TEAM.test(team)) {
    io.err('admins needs --team with a Slack team ID such as T012ABCDEF.');
    return 2;
  }
  if (enterprise !== undefined && !ENTERPRISE.test(enterprise)) {
    io.err('--enterprise takes a Slack enterprise ID such as E012ABCDEF.');
    return 2;
  }
  const userId = add ?? remove;
  if ((add && remove) || (userId !== undefined && !USER.test(userId))) {
    io.err('admins takes one of --add or --remove, with a Slack user ID such as U012ABCDEF.');
    return 2;
  }
  const config = databaseConfigOf(env, io);
  if (!config) return 2;
  if (!config.slack.oauth) {
    io.err(
      'admins: with one bot token (SLACK_BOT_TOKEN) the admins are ADMIN_USER_IDS; change that setting.',
    );
    return 2;
  }
  const db = await openDatabase(config.database, silentLogger);
  try {
    const store = createTeamAdminStore({
      db,
      clock: { now: () => Date.now() },
      newId: randomId,
      owner: processOwnerId(),
      leaseMs: 30_000,
      ownerIsGone: () => false,
    });
    if (userId === undefined) {
      const admins = await store.adminsOf(team, enterprise);
      io.out(admins.length > 0 ? `Admins of ${team}: ${admins.join(', ')}` : `${team} has no admin.`);
      return 0;
    }
    const change: AdminChange = {
      teamId: team,
      enterpriseId: enterprise,
      userId,
      action: add ? 'add' : 'remove',
      by: 'operator',
      at: Date.now(),
    };
    const result = await store.change(change);
    if (!result.ok) {
      const why = {
        already_admin: 'is already an admin',
        not_admin: 'is not an admin',
        last_admin: 'is the last admin: add another first',
      };
      io.err(`${userId} ${why[result.reason]} of ${team}; nothing changed.`);
      return 2;
    }
    io.out(`Admins of ${team}: ${result.admins.join(', ')}`);
    return 0;
  } finally {
    await db.close();
  }
}
