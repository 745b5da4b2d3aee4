import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installWorkspace, oauthEnv } from '../../support/oauth-installs.js';
import { type Harness, startHarness } from '../harness.js';
import { enableOAuth } from '../oauth-support.js';
import { query } from '../policy-support.js';

/** A browser that follows the bot's redirects by hand and keeps the cookies it is given. */
async function signInWithSlack(
  origin: string,
): Promise<{ status: number; location: string; session?: string }> {
  const started = await fetch(`${origin}/console/login/slack`, { redirect: 'manual' });
  const cookie = (started.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const authorize = await fetch(started.headers.get('location') ?? '', { redirect: 'manual' });
  const back = await fetch(authorize.headers.get('location') ?? '', {
    redirect: 'manual',
    headers: { cookie },
  });
  const session = /console_session=[^;]+/.exec(back.headers.get('set-cookie') ?? '')?.[0];
  return {
    status: back.status,
    location: back.headers.get('location') ?? '',
    ...(session ? { session } : {}),
  };
}

/**
 * Installed org-wide on Enterprise Grid: a person of any workspace of the organisation signs in to the console
 * with Slack (whose answer names the organisation), and the organisation's installer is an admin there, as in
 * Slack itself.
 */
describe('web console: Sign in with Slack on an organisation-wide install', () => {
  let h: Harness;
  let origin: string;
  beforeEach(async () => {
    h = await startHarness({ env: oauthEnv() });
    origin = enableOAuth(h);
    await installWorkspace(h.slack, origin, { enterpriseId: 'E1', userId: 'WADMIN' });
  });
  afterEach(async () => h.close());

  const me = async (session: string | undefined) => {
    const answer = await fetch(`${origin}/console/api/me`, { headers: { cookie: session ?? '' } });
    expect(answer.status).toBe(200);
    return (await answer.json()) as { user: string; team: string; roles: { admin: boolean } };
  };

  it("signs in a person of a workspace the organisation's install serves; its installer is an admin there", async () => {
    h.slack.openid.signInAs({ userId: 'WADMIN', teamId: 'T3', enterpriseId: 'E1' });
    const admin = await signInWithSlack(origin);
    expect(admin).toMatchObject({ status: 303, location: '/console' });
    expect(await me(admin.session)).toMatchObject({ user: 'WADMIN', team: 'T3', roles: { admin: true } });
    expect(
      await query(
        h.database,
        "select team_id, enterprise_id from audit_events where kind = 'console.signed_in'",
      ),
    ).toEqual([{ team_id: 'T3', enterprise_id: 'E1' }]);

    h.slack.openid.signInAs({ userId: 'WPERSON', teamId: 'T3', enterpriseId: 'E1' });
    const person = await signInWithSlack(origin);
    expect(await me(person.session)).toMatchObject({ user: 'WPERSON', team: 'T3', roles: { admin: false } });
  });

  it('refuses a workspace of another organisation, where the app is not installed', async () => {
    h.slack.openid.signInAs({ userId: 'WOTHER', teamId: 'T9', enterpriseId: 'E2' });
    expect(await signInWithSlack(origin)).toMatchObject({
      status: 303,
      location: '/console/login?refused=slack',
    });
  });
});
