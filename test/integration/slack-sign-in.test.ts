import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/logger.js';
import { createSlackSignIn } from '../../src/slack/openid-sign-in.js';
import { type FakeSlack, slackReply, startFakeSlack } from '../support/fake-slack.js';

const CLIENT_ID = '1111111111.2222222222';
const REDIRECT = 'https://approvals.example.com/console/auth/callback';

function signInAt(apiUrl: string, now = () => Date.now()) {
  return createSlackSignIn({
    apiUrl,
    clientId: CLIENT_ID,
    clientSecret: 'secret',
    clock: { now },
    logger: createLogger('error', () => {}),
    logLevel: 'error',
  });
}

/** A JWT as a token endpoint returns it; nobody checks its signature. */
function jwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'RS256' })}.${part(claims)}.c2lnbmF0dXJl`;
}

describe('Sign in with Slack over the Web API', () => {
  it("sends people to the authorize page on SLACK_API_URL's host: slack.com, GovSlack, a local fake", () => {
    const request = { redirectUri: REDIRECT, state: 'S', nonce: 'N' };
    const slack = new URL(signInAt('https://slack.com/api/').authorizeUrl(request));
    expect(`${slack.origin}${slack.pathname}`).toBe('https://slack.com/openid/connect/authorize');
    expect(Object.fromEntries(slack.searchParams)).toEqual({
      response_type: 'code',
      scope: 'openid profile',
      client_id: CLIENT_ID,
      redirect_uri: REDIRECT,
      state: 'S',
      nonce: 'N',
    });
    expect(signInAt('https://slack-gov.com/api/').authorizeUrl(request)).toMatch(
      /^https:\/\/slack-gov\.com\/openid\/connect\/authorize\?/,
    );
    expect(signInAt('http://127.0.0.1:9/api/').authorizeUrl(request)).toMatch(
      /^http:\/\/127\.0\.0\.1:9\/openid\/connect\/authorize\?/,
    );
  });

  describe('identifying the person of a code', () => {
    let slack: FakeSlack;
    beforeEach(async () => {
      slack = await startFakeSlack();
    });
    afterEach(async () => {
      await slack.close();
    });

    /** A code the fake's authorize page hands out for `nonce`. */
    async function code(nonce = 'N'): Promise<string> {
      const url = signInAt(slack.url).authorizeUrl({ redirectUri: REDIRECT, state: 'S', nonce });
      const back = await fetch(url, { redirect: 'manual' });
      return new URL(back.headers.get('location') ?? '').searchParams.get('code') ?? '';
    }

    it('answers the team, user and nonce Slack vouches for', async () => {
      slack.openid.signInAs({ userId: 'U7', teamId: 'T7' });
      expect(await signInAt(slack.url).identify(await code('the-nonce'), REDIRECT)).toEqual({
        ok: true,
        teamId: 'T7',
        enterpriseId: null,
        userId: 'U7',
        nonce: 'the-nonce',
      });
      // On Enterprise Grid, userInfo names the workspace's organisation too.
      slack.openid.signInAs({ userId: 'W8', teamId: 'T8', enterpriseId: 'E8' });
      expect(await signInAt(slack.url).identify(await code('another-nonce'), REDIRECT)).toMatchObject({
        ok: true,
        teamId: 'T8',
        enterpriseId: 'E8',
      });
    });

    it('refuses an ID token issued to another app, or expired', async () => {
      const claims = {
        sub: 'U1',
        aud: 'another-app',
        exp: Math.floor(Date.now() / 1000) + 60,
        nonce: 'N',
        'https://slack.com/team_id': 'T1',
        'https://slack.com/user_id': 'U1',
      };
      slack.setResponse('openid.connect.token', () =>
        slackReply.ok({ access_token: 'xoxp-1', id_token: jwt(claims) }),
      );
      expect(await signInAt(slack.url).identify('code', REDIRECT)).toEqual({
        ok: false,
        problem: 'id_token_for_another_app',
      });
      slack.setResponse('openid.connect.token', () =>
        slackReply.ok({ access_token: 'xoxp-1', id_token: jwt({ ...claims, aud: CLIENT_ID }) }),
      );
      const later = () => (claims.exp + 1) * 1000;
      expect(await signInAt(slack.url, later).identify('code', REDIRECT)).toEqual({
        ok: false,
        problem: 'id_token_expired',
      });
      slack.setResponse('openid.connect.token', () =>
        slackReply.ok({ access_token: 'xoxp-1', id_token: 'not-a-jwt' }),
      );
      expect(await signInAt(slack.url).identify('code', REDIRECT)).toEqual({
        ok: false,
        problem: 'unreadable_id_token',
      });
    });

    it("refuses a userInfo answer about someone else than the ID token's subject", async () => {
      slack.setResponse('openid.connect.userInfo', () =>
        slackReply.ok({ sub: 'U2', 'https://slack.com/team_id': 'T1', 'https://slack.com/user_id': 'U2' }),
      );
      expect(await signInAt(slack.url).identify(await code(), REDIRECT)).toEqual({
        ok: false,
        problem: 'user_info_of_another_person',
      });
    });

    it('turns a refused code, a redirect URL that differs and an unreachable Slack into values', async () => {
      const signIn = signInAt(slack.url);
      expect(await signIn.identify('unknown', REDIRECT)).toEqual({ ok: false, problem: 'invalid_code' });
      expect(await signIn.identify(await code(), `${REDIRECT}x`)).toEqual({
        ok: false,
        problem: 'bad_redirect_uri',
      });
      await slack.close();
      const unreachable = await signIn.identify('any', REDIRECT);
      expect(unreachable.ok).toBe(false);
    });
  });
});
