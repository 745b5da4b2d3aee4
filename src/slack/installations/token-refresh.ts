import type { Installation } from '@slack/bolt';
import { WebClient } from '@slack/web-api';
import { z } from 'zod';
import { auditEvent } from '../../audit/audit-event.js';
import type { Clock } from '../../clock.js';
import { AppError, describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { slackErrorCode } from '../slack-errors.js';
import type { InstallationRecords, InstallationRow } from './installation-records.js';
import { INSTALL_PATH } from './oauth-installer.js';

/**
 * A bot token that expires within this is refreshed before it is used: Bolt's own window (`InstallProvider`'s
 * `authorize`), so a token handed to Bolt is never one it would refresh itself.
 */
export const REFRESH_MARGIN_MS = 2 * 60 * 60 * 1000;

/** What `oauth.v2.access` with `grant_type=refresh_token` answered. */
export type RefreshAnswer =
  | { ok: true; token: string; refreshToken: string; expiresInSeconds: number }
  | { ok: false; error: string };

/** Trades a refresh token for a new access token (and a new refresh token: Slack takes each one once). */
export type TokenExchange = (refreshToken: string) => Promise<RefreshAnswer>;

const refreshed = z.object({
  access_token: z.string().min(1),
  refresh_token: z.string().min(1),
  expires_in: z.number().int().positive(),
});

/** The exchange at Slack (SLACK_API_URL), with the app's client ID and secret. */
export function slackTokenExchange(app: {
  clientId: string;
  clientSecret: string;
  apiUrl: string;
}): TokenExchange {
  const client = new WebClient(undefined, { slackApiUrl: app.apiUrl, retryConfig: { retries: 2 } });
  return async (refreshToken) => {
    try {
      const answer = refreshed.safeParse(
        await client.oauth.v2.access({
          client_id: app.clientId,
          client_secret: app.clientSecret,
          grant_type: 'refresh_token',
          refresh_token: refreshToken,
        }),
      );
      if (!answer.success) return { ok: false, error: 'unexpected_answer' };
      const { access_token, refresh_token, expires_in } = answer.data;
      return { ok: true, token: access_token, refreshToken: refresh_token, expiresInSeconds: expires_in };
    } catch (error) {
      return { ok: false, error: slackErrorCode(error) ?? describeError(error) };
    }
  };
}

export interface TokenRefreshDeps {
  records: InstallationRecords;
  open(row: InstallationRow): Installation;
  seal(installation: Installation, id: string): string;
  exchange: TokenExchange;
  clock: Clock;
  logger: Logger;
  marginMs?: number;
  /** How often a process waiting for another's refresh reads the row again. */
  pollMs?: number;
  /** How long a process waits for a refresh (its own or another's) before it gives up. */
  waitMs?: number;
}

/** Opens installations, their rotating bot token refreshed first when it is about to expire. */
export type FreshInstallation = (row: InstallationRow, refused?: string) => Promise<Installation | undefined>;

/**
 * Token rotation: `fresh(row)` opens the installation and, when its bot token has a refresh token and
 * expires within the margin (or is `refused`: the token Slack just refused with `token_expired` or
 * `invalid_auth`), refreshes it first with `oauth.v2.access` and stores the new token (audited). One process
 * at a time refreshes an installation (a claim on its row, `claimRefresh`); the others read the row again
 * until the new token is there, so each refresh token is used once. Undefined when the installation is gone.
 */
export function createTokenRefresh(deps: TokenRefreshDeps): FreshInstallation {
  const { records, clock, logger } = deps;
  const margin = deps.marginMs ?? REFRESH_MARGIN_MS;
  const pollMs = deps.pollMs ?? 50;
  const waitMs = deps.waitMs ?? 60_000;
  const stale = (installation: Installation, refused: string | undefined): boolean => {
    const bot = installation.bot;
    if (!bot?.refreshToken) return false;
    if (refused !== undefined && bot.token === refused) return true;
    return bot.expiresAt === undefined || bot.expiresAt * 1000 - clock.now() <= margin;
  };
  const refresh = async (row: InstallationRow, installation: Installation): Promise<Installation> => {
    const bot = installation.bot;
    const answer = await deps.exchange(bot?.refreshToken ?? '');
    if (!answer.ok || !bot) {
      await records.releaseRefresh(row.id);
      // Refused because another process refreshed meanwhile (its claim ran out while it waited on Slack)?
      const now = await records.find(row.id);
      const current = now && now.sealed !== row.sealed ? deps.open(now) : undefined;
      if (current && !stale(current, bot?.token)) return current;
      const error = answer.ok ? 'no bot' : answer.error;
      logger.error('slack token refresh failed', {
        installation: row.id,
        error,
        fix: `install the app there again from ${INSTALL_PATH}`,
      });
      throw new AppError(
        'slack.token_refresh_failed',
        `Slack refused to refresh the token of ${row.id} (${error}): install the app there again from ${INSTALL_PATH}.`,
      );
    }
    const at = clock.now();
    const expiresAt = Math.floor(at / 1000) + answer.expiresInSeconds;
    const renewed: Installation = {
      ...installation,
      bot: { ...bot, token: answer.token, refreshToken: answer.refreshToken, expiresAt },
    };
    const event = auditEvent('installation.token_refreshed', {
      at,
      teamId: row.teamId,
      enterpriseId: row.enterpriseId,
      payload: { enterpriseId: row.enterpriseId, expiresAt: expiresAt * 1000 },
    });
    if (!(await records.refreshed(row.id, row.sealed, deps.seal(renewed, row.id), at, [event])))
      logger.warn('slack token refreshed, but the installation changed meanwhile (reinstalled or removed)', {
        installation: row.id,
      });
    return renewed;
  };
  return async function fresh(given, refused) {
    let row: InstallationRow | undefined = given;
    const deadline = performance.now() + waitMs;
    while (row) {
      const installation = deps.open(row);
      if (!stale(installation, refused)) return installation;
      if (await records.claimRefresh(row.id)) {
        // Read again under the claim: another process may have refreshed it since.
        const claimed = await records.find(row.id);
        const current = claimed ? deps.open(claimed) : undefined;
        if (!claimed || !current || !stale(current, refused)) {
          await records.releaseRefresh(row.id);
          return current;
        }
        return refresh(claimed, current);
      }
      if (performance.now() > deadline)
        throw new AppError('slack.token_refresh_failed', `The token of ${row.id} was not refreshed in time.`);
      await new Promise((resolve) => setTimeout(resolve, pollMs));
      row = await records.find(row.id);
    }
    return undefined;
  };
}
