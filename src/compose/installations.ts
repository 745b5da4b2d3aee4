import type { InstallationStore } from '@slack/bolt';
import { type AdminDirectory, fixedAdmins } from '../approvals/team-admins.js';
import { TERMINAL_TEAM_ID } from '../cli/terminal-thread.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Stores } from '../db/stores.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import {
  createSealedInstallations,
  type SealedInstallations,
} from '../slack/installations/installation-store.js';
import type { BotTokens } from '../slack/installations/team-clients.js';
import { createTokenCipher } from '../slack/installations/token-cipher.js';
import { slackTokenExchange } from '../slack/installations/token-refresh.js';

/**
 * The stored installations (OAuth mode), sealed with the configured keys, their rotating tokens refreshed at
 * SLACK_API_URL; undefined with a single bot token.
 */
export function installationsOf(
  config: Pick<Config, 'slack'>,
  stores: Pick<Stores, 'installations'>,
  clock: Clock,
  logger: Logger,
): SealedInstallations | undefined {
  const { oauth } = config.slack;
  if (!oauth) return undefined;
  return createSealedInstallations(stores.installations, createTokenCipher(oauth.tokenKeys), clock, {
    exchange: slackTokenExchange({ ...oauth, apiUrl: config.slack.apiUrl }),
    logger,
  });
}

/**
 * Each workspace's admins: ADMIN_USER_IDS with one bot token; in OAuth mode each workspace's own list (its
 * installer, or its organisation's on Enterprise Grid, then whoever its admins add), while the terminal chat's
 * conversations keep ADMIN_USER_IDS.
 */
export function adminsOf(
  config: Pick<Config, 'slack' | 'adminUserIds'>,
  stores: Pick<Stores, 'teamAdmins'>,
): AdminDirectory {
  const fixed = fixedAdmins(config.adminUserIds);
  if (!config.slack.oauth) return fixed;
  return {
    adminsOf: (teamId, enterpriseId) =>
      teamId === TERMINAL_TEAM_ID
        ? fixed.adminsOf(teamId, enterpriseId)
        : stores.teamAdmins.adminsOf(teamId, enterpriseId),
  };
}

/** Where each workspace's token comes from: SLACK_BOT_TOKEN, or (OAuth mode) its stored installation. */
export function botTokensOf(
  config: Pick<Config, 'slack'>,
  stores: Pick<Stores, 'installations'>,
  clock: Clock,
  logger: Logger,
): BotTokens {
  const installations = installationsOf(config, stores, clock, logger);
  return installations
    ? {
        kind: 'installations',
        botToken: (teamId, enterpriseId, refused) => installations.botToken(teamId, enterpriseId, refused),
      }
    : { kind: 'single', token: config.slack.botToken };
}

/**
 * Bolt's installation store for a Slack runtime built before the database is open: it answers once `current`
 * gives the stored installations (no request is taken in before then).
 */
export function lateInstallations(current: () => SealedInstallations | undefined): InstallationStore {
  const ready = (): SealedInstallations => {
    const installations = current();
    if (!installations) throw new AppError('slack.not_installed', 'The installations are not open yet.');
    return installations;
  };
  return {
    storeInstallation: (installation) => ready().storeInstallation(installation),
    fetchInstallation: (query) => ready().fetchInstallation(query),
    deleteInstallation: (query) => ready().deleteInstallation?.(query) ?? Promise.resolve(),
  };
}
