import { WebClient } from '@slack/web-api';
import { z } from 'zod';
import type { Clock } from '../clock.js';
import type { SlackIdentity, SlackSignIn } from '../console/ports.js';
import type { Logger, LogLevel as OurLevel } from '../logger.js';
import { WEB_API_LEVELS } from './slack-adapters.js';
import { slackErrorCode } from './slack-errors.js';
import { slackLibraryLogger } from './slack-logger.js';

/** How long one sign-in call to Slack may take: a person is waiting in the browser. */
const SIGN_IN_CALL_TIMEOUT_MS = 10_000;

export interface SlackSignInOptions {
  /** SLACK_API_URL; the authorize page is on the same host (slack.com, or slack-gov.com for GovSlack). */
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  clock: Clock;
  logger: Logger;
  logLevel: OurLevel;
}

/** The claims of Slack's ID token this bot reads (docs.slack.dev/authentication/sign-in-with-slack). */
const idTokenClaims = z.object({
  sub: z.string().min(1),
  aud: z.union([z.string(), z.array(z.string())]),
  exp: z.number(),
  nonce: z.string().optional(),
  'https://slack.com/team_id': z.string().min(1),
  'https://slack.com/user_id': z.string().min(1),
});

const userInfo = z.object({
  sub: z.string().min(1),
  'https://slack.com/team_id': z.string().min(1),
  'https://slack.com/enterprise_id': z.string().min(1).optional(),
  'https://slack.com/user_id': z.string().min(1),
});

/**
 * Sign in with Slack over the Web API: the authorize URL, then `openid.connect.token` (the code for an access
 * token and an ID token) and `openid.connect.userInfo` (who the access token belongs to). A code works once, so
 * a failed exchange is not retried: the person starts again.
 *
 * @example
 * const signIn = createSlackSignIn({ apiUrl: 'https://slack.com/api/', clientId, clientSecret, clock, logger, logLevel });
 * const who = await signIn.identify(code, 'https://approvals.example.com/console/auth/callback');
 */
export function createSlackSignIn(options: SlackSignInOptions): SlackSignIn {
  // No bot token: the token call is authenticated by the client ID and secret, userInfo by the person's token.
  const client = new WebClient(undefined, {
    slackApiUrl: options.apiUrl,
    logger: slackLibraryLogger(options.logger, options.logLevel, 'web-api'),
    logLevel: WEB_API_LEVELS[options.logLevel],
    rejectRateLimitedCalls: true,
    timeout: SIGN_IN_CALL_TIMEOUT_MS,
    retryConfig: { retries: 0 },
  });
  return {
    authorizeUrl: ({ redirectUri, state, nonce }) => {
      const url = new URL('/openid/connect/authorize', new URL(options.apiUrl).origin);
      url.search = new URLSearchParams({
        response_type: 'code',
        scope: 'openid profile',
        client_id: options.clientId,
        redirect_uri: redirectUri,
        state,
        nonce,
      }).toString();
      return url.href;
    },
    identify: async (code, redirectUri) => {
      try {
        return await identify(client, options, code, redirectUri);
      } catch (error) {
        return { ok: false, problem: slackErrorCode(error) ?? describe(error) };
      }
    },
  };
}

async function identify(
  client: WebClient,
  options: SlackSignInOptions,
  code: string,
  redirectUri: string,
): Promise<SlackIdentity> {
  const tokens = await client.openid.connect.token({
    client_id: options.clientId,
    client_secret: options.clientSecret,
    code,
    redirect_uri: redirectUri,
  });
  if (!tokens.access_token || !tokens.id_token) return { ok: false, problem: 'no_tokens' };
  const claims = idTokenClaims.safeParse(jwtPayload(tokens.id_token));
  if (!claims.success) return { ok: false, problem: 'unreadable_id_token' };
  const audience = [claims.data.aud].flat();
  if (!audience.includes(options.clientId)) return { ok: false, problem: 'id_token_for_another_app' };
  if (claims.data.exp * 1000 <= options.clock.now()) return { ok: false, problem: 'id_token_expired' };
  const person = userInfo.safeParse(await client.openid.connect.userInfo({ token: tokens.access_token }));
  if (!person.success) return { ok: false, problem: 'unreadable_user_info' };
  // OpenID Connect Core 5.3.2: the userinfo answer is about the ID token's subject, or it must not be used.
  if (person.data.sub !== claims.data.sub) return { ok: false, problem: 'user_info_of_another_person' };
  return {
    ok: true,
    teamId: person.data['https://slack.com/team_id'],
    enterpriseId: person.data['https://slack.com/enterprise_id'] ?? null,
    userId: person.data['https://slack.com/user_id'],
    nonce: claims.data.nonce,
  };
}

/**
 * The claims of a JWT, read without checking its signature. That is allowed here by OpenID Connect Core
 * 3.1.3.7: the ID token came straight from Slack's token endpoint over TLS, in answer to this client's own
 * authenticated request, so TLS vouches for its issuer; audience, expiry and nonce are still checked.
 */
function jwtPayload(jwt: string): unknown {
  const payload = jwt.split('.')[1];
  if (payload === undefined) return undefined;
  try {
    return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  if (error instanceof Error && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.name : 'unknown_error';
}
