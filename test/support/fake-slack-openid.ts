import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { FakeReply } from './fake-slack.js';
import { FAKE_TEAM_ID } from './fake-slack-replies.js';
import { stringOr } from './json-value.js';

/** The path of Slack's authorize page for Sign in with Slack, on the same host as the Web API. */
export const AUTHORIZE_PATH = '/openid/connect/authorize';

/** Who a code signs in, as Slack's userInfo tells it. */
export interface SignInPerson {
  userId: string;
  teamId: string;
  /** The workspace's Enterprise Grid organisation, named in userInfo as Slack names it. */
  enterpriseId?: string;
  name: string;
}

/** Sign in with Slack as the fake serves it: the authorize page, `openid.connect.token` and `.userInfo`. */
export interface FakeSlackOpenId {
  /**
   * Who the authorize page signs in from now on (by default U1 of T1). `nonce` makes the ID tokens of the codes
   * it hands out carry that nonce instead of the one asked for, as a replayed ID token would.
   */
  signInAs(
    person: { userId: string; teamId?: string; enterpriseId?: string; name?: string },
    options?: { nonce?: string },
  ): void;
  /** Every code handed out so far becomes unusable: `openid.connect.token` answers `invalid_code`. */
  invalidateCodes(): void;
  /** Answers a GET of the authorize page: a redirect to `redirect_uri` with a new code and the given state. */
  authorize(query: URLSearchParams, res: ServerResponse): void;
  /** The answer to a Web API call of Sign in with Slack; undefined for any other method. */
  reply(method: string, params: Record<string, unknown>, token: string | undefined): FakeReply | undefined;
}

interface IssuedCode {
  person: SignInPerson;
  clientId: string;
  redirectUri: string;
  nonce: string | undefined;
}

const ok = (fields: Record<string, unknown>): FakeReply => ({ body: { ok: true, ...fields } });
const error = (code: string): FakeReply => ({ body: { ok: false, error: code } });

/**
 * The OpenID Connect side of the fake Slack (docs.slack.dev/authentication/sign-in-with-slack): a code works
 * once, for the client and redirect URI it was issued to; the ID token is a real JWT whose signature nobody
 * checks (the bot reads it straight from the token endpoint).
 */
export function createFakeSlackOpenId(): FakeSlackOpenId {
  let person: SignInPerson = { userId: 'U1', teamId: FAKE_TEAM_ID, name: 'user-u1' };
  let forcedNonce: string | undefined;
  const codes = new Map<string, IssuedCode>();
  const tokens = new Map<string, SignInPerson>();

  const token = (params: Record<string, unknown>): FakeReply => {
    const code = stringOr(params.code) ?? '';
    const issued = codes.get(code);
    const clientId = stringOr(params.client_id);
    if (!clientId) return error('invalid_client_id');
    if (!stringOr(params.client_secret)) return error('bad_client_secret');
    if (!issued || issued.clientId !== clientId) return error('invalid_code');
    if (stringOr(params.redirect_uri) !== issued.redirectUri) return error('bad_redirect_uri');
    codes.delete(code);
    const accessToken = `xoxp-openid-${secret()}`;
    tokens.set(accessToken, issued.person);
    return ok({
      access_token: accessToken,
      token_type: 'Bearer',
      id_token: idToken(issued, clientId),
    });
  };

  const userInfo = (accessToken: string | undefined): FakeReply => {
    const who = accessToken === undefined ? undefined : tokens.get(accessToken);
    if (!who) return error('invalid_auth');
    return ok({
      sub: who.userId,
      'https://slack.com/user_id': who.userId,
      'https://slack.com/team_id': who.teamId,
      ...(who.enterpriseId ? { 'https://slack.com/enterprise_id': who.enterpriseId } : {}),
      name: who.name,
      locale: 'en-US',
    });
  };

  return {
    signInAs: (next, options = {}) => {
      person = { teamId: FAKE_TEAM_ID, name: `user-${next.userId.toLowerCase()}`, ...next };
      forcedNonce = options.nonce;
    },
    invalidateCodes: () => codes.clear(),
    authorize: (query, res) => {
      const redirectUri = query.get('redirect_uri');
      const clientId = query.get('client_id');
      if (!redirectUri || !clientId || query.get('response_type') !== 'code') {
        res.writeHead(400, { 'content-type': 'text/plain' });
        res.end('invalid authorize request');
        return;
      }
      const code = secret();
      codes.set(code, {
        person,
        clientId,
        redirectUri,
        nonce: forcedNonce ?? query.get('nonce') ?? undefined,
      });
      const back = new URL(redirectUri);
      back.searchParams.set('code', code);
      const state = query.get('state');
      if (state !== null) back.searchParams.set('state', state);
      res.writeHead(302, { location: back.href });
      res.end();
    },
    reply: (method, params, accessToken) => {
      if (method === 'openid.connect.token') return token(params);
      if (method === 'openid.connect.userInfo') return userInfo(accessToken);
      return undefined;
    },
  };
}

/** An ID token as Slack issues it: a JWT with Slack's claims (its signature is not checked by anyone here). */
function idToken(issued: IssuedCode, clientId: string): string {
  const now = Math.floor(Date.now() / 1000);
  const claims: Record<string, unknown> = {
    iss: 'https://slack.com',
    sub: issued.person.userId,
    aud: clientId,
    exp: now + 3600,
    iat: now,
    auth_time: now,
    'https://slack.com/user_id': issued.person.userId,
    'https://slack.com/team_id': issued.person.teamId,
    name: issued.person.name,
  };
  if (issued.nonce !== undefined) claims.nonce = issued.nonce;
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ typ: 'JWT', alg: 'RS256', kid: 'fake' })}.${part(claims)}.${secret()}`;
}

function secret(): string {
  return randomBytes(16).toString('base64url');
}
