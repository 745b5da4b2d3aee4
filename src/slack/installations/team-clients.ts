import webApi, {
  type FetchFunction,
  type WebAPICallResult,
  WebClient,
  type WebClientOptions,
} from '@slack/web-api';
import { NotInstalled } from '../../conversations/delivery.js';
import { AppError, describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { slackErrorCode } from '../slack-errors.js';
import { INSTALL_PATH } from './oauth-installer.js';

/**
 * The Web API client's own default retry policy. Read from the default export: the package is CommonJS and Node's
 * ESM loader does not see `retryPolicies` as a named export (`npm run bench` and other commands run under tsx).
 */
const DEFAULT_RETRIES = webApi.retryPolicies.tenRetriesInAboutThirtyMinutes;

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

type TokenOf = (teamId: string, refused?: string) => Promise<string | undefined>;

/**
 * A Web API client whose token is its workspace's, read for each call and again for each HTTP request the call
 * makes (see `readForEachRequest`).
 */
class InstallationClient extends WebClient {
  constructor(
    private readonly workspace: string | undefined,
    private readonly tokenOf: TokenOf,
    options: WebClientOptions,
    private readonly log: Logger,
  ) {
    super(
      undefined,
      workspace === undefined ? options : readForEachRequest(workspace, tokenOf, options, log),
    );
  }

  override async apiCall(method: string, options: Record<string, unknown> = {}): Promise<WebAPICallResult> {
    const teamId = this.workspace;
    const token = teamId === undefined ? undefined : await this.tokenOf(teamId);
    if (token === undefined) throw notInstalled(teamId, method, this.log);
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

/** The error of a call made for no workspace, or for one the app is no longer installed in, logged with its fix. */
function notInstalled(teamId: string | undefined, method: string, log: Logger): AppError {
  const problem =
    teamId === undefined
      ? `Slack ${method} names no workspace: nothing was sent`
      : `The app is not installed in workspace ${teamId} (removed, or its tokens revoked): nothing was sent`;
  log.error('slack call without a token', {
    method,
    teamId,
    fix: teamId === undefined ? 'report this' : `install the app there again from ${INSTALL_PATH}`,
  });
  return teamId === undefined
    ? new AppError('slack.not_installed', `${problem}.`)
    : new NotInstalled(teamId, `${problem}.`);
}

/**
 * The client's options, so that every HTTP request carries the token the workspace has at that moment. The Web
 * API client sends a failed request again (a 5xx, a timeout, a rate limit waited out: up to half an hour with
 * its default policy) with the token its call began with, which the workspace may have revoked meanwhile (the
 * app removed) or replaced (token rotation, a new install). So each request reads the token again: gone, the
 * request is not sent, and the call ends at once with `NotInstalled` instead of being tried again.
 */
function readForEachRequest(
  teamId: string,
  tokenOf: TokenOf,
  options: WebClientOptions,
  log: Logger,
): WebClientOptions {
  const send: FetchFunction = options.fetch ?? globalThis.fetch;
  const fetch: FetchFunction = async (url, init) => {
    const token = await tokenOf(teamId);
    if (token === undefined) throw notInstalled(teamId, String(url).split('/').pop() ?? '', log);
    const headers = init?.headers?.Authorization
      ? { ...init.headers, Authorization: `Bearer ${token}` }
      : init?.headers;
    return send(url, { ...init, ...(headers ? { headers } : {}) });
  };
  // The client hands its retry options to p-retry, which gives up at once when `onFailedAttempt` throws; the
  // client wraps what `fetch` throws in a WebAPIRequestError, whose `cause` it is.
  const retryConfig = {
    ...(options.retryConfig ?? DEFAULT_RETRIES),
    onFailedAttempt: (error: unknown) => {
      const cause = error instanceof Error ? error.cause : undefined;
      if (cause instanceof NotInstalled) throw cause;
    },
  };
  return { ...options, fetch, retryConfig };
}
