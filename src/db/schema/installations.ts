import { integer, millis, text, time } from './columns.js';
import { index, table, uniqueIndex } from './table.js';

/**
 * The app's installations in Slack (OAuth mode), one row each: a workspace's by its team ID (`T:<team>`), an
 * organisation-wide one by its enterprise ID (`E:<enterprise>`). The installation Slack answered, tokens and
 * all, is held only sealed (AES-256-GCM, src/slack/installations/token-cipher.ts); the columns beside it say
 * whose it is, so it can be found and listed without any key.
 */
export const slackInstallations = table(
  'slack_installations',
  {
    id: text('id').primaryKey(),
    teamId: text('team_id'),
    enterpriseId: text('enterprise_id'),
    /** 1 for an organisation-wide install (Enterprise Grid). */
    enterpriseInstall: integer('enterprise_install').notNull(),
    /** Who installed the app. */
    installerUserId: text('installer_user_id'),
    botUserId: text('bot_user_id'),
    /** The installation as JSON, sealed: `v1:<key id>:<iv>:<ciphertext>`. */
    sealed: text('sealed').notNull(),
    installedAt: millis('installed_at'),
    updatedAt: millis('updated_at'),
    /**
     * With token rotation: the process refreshing the bot token now, and until when (one at a time; the others
     * wait for the new token). Null when nobody is.
     */
    leaseOwner: text('lease_owner'),
    leaseUntil: time('lease_until'),
  },
  (t) => [index('slack_installations_enterprise').on(t.enterpriseId)],
);

/**
 * The admins of each workspace installed through OAuth (`/approvals admins add|remove`, `npm run db -- admins`).
 * A workspace with no row here has one admin: the person who installed the app there.
 */
export const teamAdmins = table(
  'team_admins',
  {
    teamId: text('team_id').notNull(),
    userId: text('user_id').notNull(),
    /** Who added them: an admin's user ID, `operator` (the command line), or `install` (the installer, kept). */
    addedBy: text('added_by').notNull(),
    addedAt: millis('added_at'),
  },
  (t) => [uniqueIndex('team_admins_user').on(t.teamId, t.userId)],
);
