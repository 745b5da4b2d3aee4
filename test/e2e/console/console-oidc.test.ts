import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AUTHORIZE_METHOD, slackReply } from '../../support/fake-slack.js';
import { rows } from '../db-rows.js';
import { type Harness, startHarness } from '../harness.js';

const CLIENT_ID = '1111111111.2222222222';
const CLIENT_SECRET = 'oidc-client-secret';

/** One step of the flow as a browser sees it: where it is sent next, and the cookie it was given. */
interface Step {
  status: number;
  location: string;
  cookie: string | undefined;
  setCookie: string;
}

async function visit(url: string, cookie?: string): Promise<Step> {
  const answer = await fetch(url, { redirect: 'manual', ...(cookie ? { headers: { cookie } } : {}) });
  const setCookie = answer.headers.get('set-cookie') ?? '';
  const pair = setCookie.split(';')[0];
  return {
    status: answer.status,
    location: answer.headers.get('location') ?? '',
    cookie: pair && !pair.endsWith('=') ? pair : undefined,
    setCookie,
  };
}

describe('web console: Sign in with Slack (OpenID Connect)', () => {
  let h: Harness;
  let origin: string;
  beforeEach(async () => {
    h = await startHarness({ env: { SLACK_CLIENT_ID: CLIENT_ID, SLACK_CLIENT_SECRET: CLIENT_SECRET } });
    origin = new URL(h.url).origin;
  });
  afterEach(async () => {
    await h.close();
  });

  const audit = async () =>
    (await rows(h.dbPath, 'select kind, actor, payload from audit_events order by seq')).filter((e) =>
      String(e.kind).startsWith('console.'),
    );

  /** Starts signing in: the bot's redirect to Slack's authorize page, with its state cookie. */
  async function start(): Promise<{ authorize: URL; cookie: string; setCookie: string }> {
    const started = await visit(`${origin}/console/login/slack`);
    expect(started.status).toBe(303);
    if (!started.cookie) throw new Error('no sign-in cookie');
    return { authorize: new URL(started.location), cookie: started.cookie, setCookie: started.setCookie };
  }

  /** Slack's authorize page sends the browser back to the callback with a code and the state. */
  async function slackSendsBack(authorize: URL): Promise<URL> {
    const back = await visit(authorize.href);
    expect(back.status).toBe(302);
    return new URL(back.location);
  }

  async function refusedWith(step: Step, page: string, reason: string) {
    expect(step.status).toBe(303);
    expect(step.location).toBe(`/console/login?refused=${page}`);
    expect(step.setCookie).not.toContain('console_session=');
    const events = await audit();
    expect(events.map((e) => e.kind)).not.toContain('console.signed_in');
    const refused = events.filter((e) => e.kind === 'console.refused');
    expect(refused.map((e) => JSON.parse(String(e.payload)).reason)).toEqual([reason]);
    return refused[0];
  }

  it('sends the person to Slack with the openid profile scope, client ID, redirect URL, state and nonce', async () => {
    const { authorize, setCookie } = await start();
    expect(`${authorize.origin}${authorize.pathname}`).toBe(
      `http://127.0.0.1:${h.slack.port}/openid/connect/authorize`,
    );
    const query = authorize.searchParams;
    expect(query.get('response_type')).toBe('code');
    expect(query.get('scope')).toBe('openid profile');
    expect(query.get('client_id')).toBe(CLIENT_ID);
    expect(query.get('redirect_uri')).toBe(`${origin}/console/auth/callback`);
    expect(query.get('state')).toMatch(/^[\w-]{43}$/);
    expect(query.get('nonce')).toMatch(/^[\w-]{43}$/);
    expect(query.get('nonce')).not.toBe(query.get('state'));
    expect(setCookie).toMatch(/^console_sign_in=/);
    expect(setCookie).toContain('Max-Age=600');
    expect(setCookie).toContain('HttpOnly');
    expect(setCookie).toContain('SameSite=Lax');
    // The state and nonce, signed with the client secret (an HMAC-SHA256, base64).
    const value = decodeURIComponent(setCookie.split(';')[0] ?? '').replace('console_sign_in=', '');
    const [state, nonce, signature] = value.split('.');
    expect([state, nonce]).toEqual([query.get('state'), query.get('nonce')]);
    expect(signature).toMatch(/^[\w+/]{43}=$/);
  });

  it('signs the person in: the code is exchanged at the Web API, the session works, the audit says slack', async () => {
    h.slack.openid.signInAs({ userId: 'U42' });
    const { authorize, cookie } = await start();
    const back = await slackSendsBack(authorize);
    const signedIn = await visit(back.href, cookie);
    expect(signedIn.status).toBe(303);
    expect(signedIn.location).toBe('/console');
    expect(signedIn.setCookie).toMatch(/console_sign_in=;/);
    const session = signedIn.setCookie.match(/console_session=[^;]+/)?.[0];
    if (!session) throw new Error('no session cookie');

    const me = await fetch(`${origin}/console/api/me`, { headers: { cookie: session } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ user: 'U42', team: 'T1', via: 'slack' });

    const exchange = h.slack.callsTo('openid.connect.token')[0];
    expect(exchange?.params).toEqual({
      client_id: CLIENT_ID,
      client_secret: CLIENT_SECRET,
      code: back.searchParams.get('code'),
      redirect_uri: `${origin}/console/auth/callback`,
    });
    expect(h.slack.callsTo('openid.connect.userInfo')[0]?.token).toMatch(/^xoxp-openid-/);
    expect(h.slack.callsTo(AUTHORIZE_METHOD)).toHaveLength(1);
    const signedInEvent = (await audit()).find((e) => e.kind === 'console.signed_in');
    expect(signedInEvent?.actor).toBe('U42');
    expect(JSON.parse(String(signedInEvent?.payload))).toEqual({ via: 'slack' });

    // The same answer from Slack a second time signs nobody in: the code was used up.
    const replayed = await visit(back.href, cookie);
    expect(replayed.location).toBe('/console/login?refused=slack');
  });

  it('refuses a person of another workspace, and audits who tried', async () => {
    h.slack.openid.signInAs({ userId: 'U9', teamId: 'T2' });
    const { authorize, cookie } = await start();
    const step = await visit((await slackSendsBack(authorize)).href, cookie);
    const refused = await refusedWith(step, 'workspace', 'wrong_workspace');
    expect(refused?.actor).toBe('U9');
    const page = await (await fetch(`${origin}${step.location}`)).text();
    expect(page).toContain('another workspace');
  });

  it('refuses a state that is not the one bound to the browser, before asking Slack', async () => {
    const { authorize, cookie } = await start();
    const back = await slackSendsBack(authorize);
    back.searchParams.set('state', 'forged-state');
    await refusedWith(await visit(back.href, cookie), 'state', 'state_mismatch');
    expect(h.slack.callsTo('openid.connect.token')).toEqual([]);
  });

  it('refuses a callback without the sign-in cookie, or with one the bot did not sign', async () => {
    const { authorize, cookie } = await start();
    const back = await slackSendsBack(authorize);
    const state = back.searchParams.get('state') ?? '';
    const without = await visit(back.href);
    expect(without.location).toBe('/console/login?refused=state');

    // The state the attacker chose, with a signature that belongs to another value.
    const signature = decodeURIComponent(cookie.split('=').slice(1).join('=')).split('.').at(-1);
    const forged = `console_sign_in=${encodeURIComponent(`${state}.my-nonce.${signature}`)}`;
    const withForged = await visit(back.href, forged);
    expect(withForged.location).toBe('/console/login?refused=state');
    expect(h.slack.callsTo('openid.connect.token')).toEqual([]);
    const reasons = (await audit()).map((e) => JSON.parse(String(e.payload)).reason);
    expect(reasons).toEqual(['state_mismatch', 'state_mismatch']);
  });

  it('refuses a code Slack does not accept, and a Slack that fails, without crashing', async () => {
    const { authorize, cookie } = await start();
    const back = await slackSendsBack(authorize);
    h.slack.openid.invalidateCodes();
    await refusedWith(await visit(back.href, cookie), 'slack', 'slack_refused');
    expect(h.slack.callsTo('openid.connect.token')[0]?.reply).toEqual({ ok: false, error: 'invalid_code' });
    expect(h.logs.join('\n')).toContain('invalid_code');

    h.slack.setResponse('openid.connect.token', () => slackReply.http(503));
    const again = await start();
    const failed = await visit((await slackSendsBack(again.authorize)).href, again.cookie);
    expect(failed.location).toBe('/console/login?refused=slack');
    expect((await fetch(`${origin}/console/login`)).status).toBe(200);
  });

  it('refuses an ID token whose nonce is not the one this browser asked for', async () => {
    h.slack.openid.signInAs({ userId: 'U42' }, { nonce: 'nonce-of-another-sign-in' });
    const { authorize, cookie } = await start();
    const step = await visit((await slackSendsBack(authorize)).href, cookie);
    const refused = await refusedWith(step, 'state', 'nonce_mismatch');
    expect(refused?.actor).toBe('U42');
  });
});
