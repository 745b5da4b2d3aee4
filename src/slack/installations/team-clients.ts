import { type WebAPICallResult, WebClient, type WebClientOptions } from '@slack/web-api';
import { NotInstalled } from '../../conversations/delivery.js';
import { AppError, describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { slackErrorCode } from '../slack-errors.js';
import { INSTALL_PATH } from './oauth-installer.js';

/** Where the bot's tokens come from: the one of SLACK_BOT_TOKEN, or each workspace's stored installation. */
export type BotTokens =
  | { kind: 'single'; token: string }
  | {
      kind: 'installations';
      /**
       * The team's own install's token, or else its organisation's (an org-wide install); a rotating one
       * refreshed first when it expires soon or is `refused` (Slack just refused it).
       */
      botToken(teamId: string, enterpriseId?: string, refused?: string): Promise<string | undefined>;
    };

/** The Web API client that speaks for one workspace. */
export interface SlackClients {
  /**
   * The client of `teamId`'s workspace (of Enterprise Grid organisation `enterpriseId`, whose org-wide install
   * answers when the team has none of its own); undefined names none (the single token's workspace, or in OAuth
   * mode a client whose calls fail: a call must say which workspace it is for).
   */
  forTeam(teamId: string | undefined, enterpriseId?: string | undefined): WebClient;
}

/** Slack's answers to a token it will not take again: the workspace must install the app again. */
export const DEAD_TOKEN = new Set(['token_revoked', 'invalid_auth', 'account_inactive', 'not_authed']);

/** Slack's answers to a token that a refresh may cure (token rotation): the call is made once more after it. */
const REFRESHABLE = new Set(['token_expired', 'invalid_auth']);

/**
 * The clients by team. With one token, one client for every team. With installations, one client per team
 * (kept, so its queue and retries are per workspace), whose every call first reads the team's token from the
 * store: a token deleted on uninstall is never used again, in any process, and a team with none gets no call
 * at all, only a clear error and a log line saying what to do.
 */
export function createSlackClients(
  tokens: BotTokens,
  options: WebClientOptions,
  logger: Logger,
): SlackClients {
  if (tokens.kind === 'single') {
    const client = new WebClient(tokens.token, options);
    return { forTeam: () => client };
  }
  const clients = new Map<string, WebClient>();
  const nowhere = new InstallationClient(undefined, tokens.botToken, options, logger);
  return {
    forTeam(teamId, enterpriseId) {
      if (teamId === undefined) return nowhere;
      const key = `${teamId}:${enterpriseId ?? ''}`;
      let client = clients.get(key);
      if (!client) {
        const tokenOf = (team: string, refused?: string) => tokens.botToken(team, enterpriseId, refused);
        client = new InstallationClient(teamId, tokenOf, options, logger);
        clients.set(key, client);
      }
      return client;
    },
  };
}

/** A Web API client whose token is its workspace's, read for each call. */
class InstallationClient extends WebClient {
  constructor(
    private readonly workspace: string | undefined,
    private readonly tokenOf: (teamId: string, refused?: string) => Promise<string | undefined>,
    options: WebClientOptions,
    private readonly log: Logger,
  ) {
    super(undefined, options);
  }

  override async apiCall(method: string, options: Record<string, unknown> = {}): Promise<WebAPICallResult> {
    const teamId = this.workspace;
    const token = teamId === undefined ? undefined : await this.tokenOf(teamId);
    if (token === undefined) {
      const problem =
        teamId === undefined
          ? `Slack ${method} names no workspace: nothing was sent`
          : `The app is not installed in workspace ${teamId} (removed, or its tokens revoked): nothing was sent`;
      this.log.error('slack call without a token', {
        method,
        teamId,
        fix: teamId === undefined ? 'report this' : `install the app there again from ${INSTALL_PATH}`,
      });
      throw teamId === undefined
        ? new AppError('slack.not_installed', `${problem}.`)
        : new NotInstalled(teamId, `${problem}.`);
    }
    try {
      return await this.withRefresh(method, options, teamId, token);
    } catch (error) {
      const code = slackErrorCode(error);
      if (code !== undefined && DEAD_TOKEN.has(code))
        this.log.error('slack refused the workspace token', {
          method,
          teamId,
          error: describeError(error),
          fix: `install the app there again from ${INSTALL_PATH}`,
        });
      throw error;
    }
  }

  /** The call; refused with an expired token, made once more with the refreshed one (token rotation). */
  private async withRefresh(
    method: string,
    options: Record<string, unknown>,
    teamId: string | undefined,
    token: string,
  ): Promise<WebAPICallResult> {
    try {
      return await super.apiCall(method, { ...options, token });
    } catch (error) {
      const code = slackErrorCode(error);
      if (teamId === undefined || code === undefined || !REFRESHABLE.has(code)) throw error;
      const renewed = await this.tokenOf(teamId, token);
      if (renewed === undefined || renewed === token) throw error;
      this.log.info('slack token refreshed after a refusal', { method, teamId, refusal: code });
      return super.apiCall(method, { ...options, token: renewed });
    }
  }
}
