import { WebClient } from '@slack/web-api';
import type { Config } from '../config.js';
import { describeError } from '../errors.js';
import type { Logger, LogLevel } from '../logger.js';
import { slackErrorCode } from './slack-errors.js';
import { slackLibraryLogger } from './slack-logger.js';

/** Who the bot token belongs to, as `auth.test` answered: Bolt, given both, does not ask again. */
export interface SlackIdentity {
  botId: string;
  botUserId: string;
}

export type TokenCheck = { ok: true; identity?: SlackIdentity } | { ok: false; problem: string };

/** What to do about each answer Slack gives to a token it does not accept. */
const REFUSALS: Record<string, string> = {
  invalid_auth: 'is not a valid token',
  not_authed: 'is not a valid token',
  token_revoked: 'was revoked',
  token_expired: 'has expired',
  account_inactive: 'belongs to a deactivated app or workspace',
  missing_scope: 'lacks a scope it needs',
  not_allowed_token_type: 'is not the right kind of token',
};

const WHERE = {
  SLACK_BOT_TOKEN:
    'copy the Bot User OAuth Token (xoxb-…) from the app settings, OAuth & Permissions (reinstalling the app may change it)',
  SLACK_APP_TOKEN:
    'generate an app-level token (xapp-…) with the connections:write scope under Basic Information → App-Level Tokens',
} as const;

/**
 * Asks Slack, before anything starts, whether it accepts the configured tokens: the bot token with
 * `auth.test`, and in Socket Mode the app-level token with `apps.connections.open` (the call Socket Mode
 * starts with; the connection URL it returns is not used). A refusal names the variable and how to fix it,
 * so a wrong token stops start-up with one message instead of a bot that looks healthy and never answers.
 * The bot token's identity is handed on, so Bolt does not call `auth.test` a second time. What the Web API
 * client logs meanwhile (a failed attempt before its retry) goes through the bot's logger as one JSON line.
 */
export async function checkSlackTokens(
  slack: Config['slack'],
  log: { logger: Logger; level: LogLevel },
): Promise<TokenCheck> {
  const options = {
    slackApiUrl: slack.apiUrl,
    retryConfig: { retries: 1 },
    timeout: 15_000,
    logger: slackLibraryLogger(log.logger, log.level, 'web-api'),
  };
  let identity: SlackIdentity | undefined;
  // Installs into several workspaces have no token of their own: each installation's is checked when stored.
  const bot = slack.oauth
    ? { ok: true as const }
    : await check('SLACK_BOT_TOKEN', slack.apiUrl, async () => {
        const { bot_id: botId, user_id: botUserId } = await new WebClient(
          slack.botToken,
          options,
        ).auth.test();
        if (botId && botUserId) identity = { botId, botUserId };
      });
  if (!bot.ok) return bot;
  if (slack.mode.kind === 'socket') {
    const { appToken } = slack.mode;
    const app = await check('SLACK_APP_TOKEN', slack.apiUrl, () =>
      new WebClient(appToken, options).apps.connections.open({}),
    );
    if (!app.ok) return app;
  }
  return identity ? { ok: true, identity } : { ok: true };
}

async function check(
  variable: keyof typeof WHERE,
  apiUrl: string,
  call: () => Promise<unknown>,
): Promise<TokenCheck> {
  try {
    await call();
    return { ok: true };
  } catch (error) {
    const code = slackErrorCode(error);
    if (code !== undefined) {
      const refusal = REFUSALS[code] ?? 'was refused';
      return { ok: false, problem: `${variable} ${refusal} (Slack answered ${code}): ${WHERE[variable]}.` };
    }
    return {
      ok: false,
      problem: `${variable} could not be checked: Slack did not answer at ${apiUrl} (${describeError(error)}); check the network, a proxy, or SLACK_API_URL.`,
    };
  }
}
