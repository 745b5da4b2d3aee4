import type { Installation, InstallationQuery, InstallationStore } from '@slack/bolt';
import { z } from 'zod';
import type { InstallKey } from '../../approvals/removed-workspaces.js';
import { auditEvent } from '../../audit/audit-event.js';
import type { Clock } from '../../clock.js';
import { AppError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import {
  type InstallationRecords,
  type InstallationRow,
  type InstalledWorkspace,
  installationId,
} from './installation-records.js';
import type { TokenCipher } from './token-cipher.js';
import { createTokenRefresh, type TokenExchange } from './token-refresh.js';

/** Why an installation stopped: Slack's event, or a person at the command line. */
export type RemovalReason = 'app_uninstalled' | 'tokens_revoked';

/** Bolt's installation store over the database, plus what the bot itself asks of the installations. */
export interface SealedInstallations extends InstallationStore {
  fetchInstallation(query: InstallationQuery<boolean>): Promise<Installation>;
  /**
   * The bot token of a workspace (or of the organisation it belongs to), or undefined when not installed. A
   * rotating token is refreshed first when it expires soon, or when it is `refused` (Slack just refused it).
   */
  botToken(teamId: string, enterpriseId?: string, refused?: string): Promise<string | undefined>;
  /** Every installation, with its bot token when it can be read (the health check's list). */
  workspaces(): Promise<InstalledWorkspace[]>;
  /** Whose every installation is, without opening any. */
  installs(): Promise<InstallKey[]>;
  /** Deletes an installation's tokens for good, audited; false when none was stored. */
  remove(
    key: { teamId?: string | undefined; enterpriseId?: string | undefined },
    reason: RemovalReason,
  ): Promise<boolean>;
}

const party = z.object({ id: z.string().min(1), name: z.string().optional() });

/** What an opened installation must hold; the rest of what Slack answered is kept as it is. */
const storedInstallation = z.looseObject({
  team: party.optional(),
  enterprise: party.optional(),
  user: z.looseObject({
    id: z.string(),
    token: z.string().optional(),
    scopes: z.array(z.string()).optional(),
  }),
  bot: z
    .looseObject({ token: z.string(), id: z.string(), userId: z.string(), scopes: z.array(z.string()) })
    .optional(),
  isEnterpriseInstall: z.boolean().optional(),
});

/**
 * Implements Bolt's `InstallationStore` (what `InstallProvider` stores after `oauth.v2.access` and what Bolt's
 * `authorize` fetches for each event) over `records`, every installation sealed with `cipher`, the row's id
 * bound to it. A workspace's install is found by its team, an organisation-wide one by its enterprise.
 */
export function createSealedInstallations(
  records: InstallationRecords,
  cipher: TokenCipher,
  clock: Clock,
  /** Token rotation: how tokens are refreshed (SLACK_API_URL's `oauth.v2.access`); without it, never. */
  rotation?: { exchange: TokenExchange; logger: Logger; marginMs?: number },
): SealedInstallations {
  const open = (row: InstallationRow): Installation => {
    const opened = cipher.open(row.sealed, row.id);
    if (!opened.ok) {
      throw new AppError(
        'slack.installation_unreadable',
        `The stored installation ${row.id} cannot be read (${UNREADABLE[opened.reason]}); install the app there again from /slack/install.`,
      );
    }
    const value: unknown = JSON.parse(opened.text);
    if (!isInstallation(value))
      throw new AppError(
        'slack.installation_unreadable',
        `The stored installation ${row.id} is not an installation.`,
      );
    return value;
  };
  const fresh = rotation
    ? createTokenRefresh({
        records,
        open,
        seal: (installation, id) => cipher.seal(JSON.stringify(installation), id),
        clock,
        ...rotation,
      })
    : async (row: InstallationRow) => open(row);
  const lookUp = async (query: {
    teamId?: string | undefined;
    enterpriseId?: string | undefined;
    org?: boolean;
  }) => {
    const ids = [
      query.org ? undefined : installationId({ teamId: query.teamId }),
      installationId({ enterpriseId: query.enterpriseId }),
    ];
    for (const id of ids) {
      const row = id === undefined ? undefined : await records.find(id);
      if (row) return row;
    }
    return undefined;
  };
  return {
    async storeInstallation(installation) {
      const org = installation.isEnterpriseInstall === true;
      const id = installationId({
        teamId: org ? undefined : installation.team?.id,
        enterpriseId: installation.enterprise?.id,
      });
      if (id === undefined)
        throw new AppError('slack.installation_unreadable', 'Slack named no team or enterprise.');
      const now = clock.now();
      const teamId = org ? null : (installation.team?.id ?? null);
      await records.save(
        {
          id,
          teamId,
          enterpriseId: installation.enterprise?.id ?? null,
          enterpriseInstall: org,
          installerUserId: installation.user.id,
          botUserId: installation.bot?.userId ?? null,
          sealed: cipher.seal(JSON.stringify(installation), id),
          installedAt: now,
          updatedAt: now,
        },
        [
          auditEvent('installation.added', {
            at: now,
            actor: installation.user.id,
            teamId,
            enterpriseId: installation.enterprise?.id ?? null,
            payload: {
              enterpriseId: installation.enterprise?.id ?? null,
              enterpriseInstall: org,
              scopes: installation.bot?.scopes ?? [],
            },
          }),
        ],
      );
    },
    async fetchInstallation(query) {
      const row = await lookUp({ ...query, org: query.isEnterpriseInstall });
      if (!row)
        throw new AppError('slack.not_installed', `The app is not installed for ${describeQuery(query)}.`);
      const opened = await fresh(row);
      if (!opened)
        throw new AppError('slack.not_installed', `The app is not installed for ${describeQuery(query)}.`);
      // Refreshed here already, one process at a time: Bolt gets no refresh token, so never refreshes itself.
      const installation = opened.bot ? { ...opened, bot: withoutRefresh(opened.bot) } : opened;
      // Only the installer's own user token is theirs to use.
      if (query.userId !== undefined && installation.user.id !== query.userId)
        return { ...installation, user: { id: query.userId, token: undefined, scopes: undefined } };
      return installation;
    },
    async deleteInstallation(query) {
      await this.remove({ teamId: query.teamId, enterpriseId: query.enterpriseId }, 'tokens_revoked');
    },
    async botToken(teamId, enterpriseId, refused) {
      const row = await lookUp({ teamId, enterpriseId });
      return row ? (await fresh(row, refused))?.bot?.token : undefined;
    },
    async workspaces() {
      const listed: InstalledWorkspace[] = [];
      for (const row of await records.all()) {
        let botToken: string | undefined;
        try {
          botToken = (await fresh(row))?.bot?.token;
        } catch {
          // Unreadable (another key, changed) or not refreshed: the health check names it as refused.
          botToken = undefined;
        }
        listed.push({ teamId: row.teamId, enterpriseId: row.enterpriseId, botToken });
      }
      return listed;
    },
    async installs() {
      return (await records.all()).map(({ teamId, enterpriseId, enterpriseInstall }) => ({
        teamId,
        enterpriseId,
        enterpriseInstall,
      }));
    },
    async remove(key, reason) {
      // Exactly this workspace's (or organisation's) install: never the organisation's for one workspace.
      const id = installationId(key);
      const row = id === undefined ? undefined : await records.find(id);
      if (!row) return false;
      return records.remove(row.id, [
        auditEvent('installation.removed', {
          at: clock.now(),
          teamId: row.teamId,
          enterpriseId: row.enterpriseId,
          payload: { enterpriseId: row.enterpriseId, enterpriseInstall: row.enterpriseInstall, reason },
        }),
      ]);
    },
  };
}

/** A bot as Bolt's `authorize` gets it: without what would make Bolt refresh its token on its own. */
function withoutRefresh(bot: NonNullable<Installation['bot']>): NonNullable<Installation['bot']> {
  const { refreshToken: _refreshToken, expiresAt: _expiresAt, ...rest } = bot;
  return rest;
}

/** What Slack answered once, as stored: the fields the bot relies on checked, the rest kept as it was. */
function isInstallation(value: unknown): value is Installation {
  return storedInstallation.safeParse(value).success;
}

const UNREADABLE = {
  malformed: 'it is not a sealed value',
  unknown_key:
    'it was encrypted with a key that is neither TOKEN_ENCRYPTION_KEY nor TOKEN_ENCRYPTION_KEY_PREVIOUS',
  tampered: 'it was changed after it was encrypted, or belongs to another installation',
} as const;

function describeQuery(query: InstallationQuery<boolean>): string {
  return query.isEnterpriseInstall ? `organisation ${query.enterpriseId}` : `workspace ${query.teamId}`;
}
