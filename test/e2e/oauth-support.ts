import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { SlackCall } from '../support/fake-slack.js';
import type { FakeWorkspace } from '../support/fake-slack-oauth.js';
import { appMentionEvent, eventEnvelope, nextTs, postEvent } from '../support/slack-requests.js';
import { type Harness, SECRET } from './harness.js';

export const OAUTH_CLIENT = { clientId: '111.222', clientSecret: 'client-secret' };

/** The settings of a bot installed into several workspaces (no SLACK_BOT_TOKEN). */
export function oauthEnv(): Record<string, string> {
  return {
    SLACK_BOT_TOKEN: '',
    SLACK_CLIENT_ID: OAUTH_CLIENT.clientId,
    SLACK_CLIENT_SECRET: OAUTH_CLIENT.clientSecret,
    SLACK_STATE_SECRET: randomBytes(24).toString('hex'),
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
}

/** Lets the fake Slack's authorize page send installers back to this bot. */
export function enableOAuth(h: Harness): string {
  const base = new URL(h.url).origin;
  h.slack.oauth.enable({ ...OAUTH_CLIENT, redirectUrl: `${base}/slack/oauth_redirect` });
  return base;
}

/** One installer's browser: the install page, Slack's authorize page, the redirect back (cookies carried by hand). */
export async function install(
  h: Pick<Harness, 'slack'>,
  base: string,
): Promise<{ status: number; page: string; redirect: string; cookie: string }> {
  const start = await fetch(`${base}/slack/install`);
  const page = await start.text();
  const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const authorizeUrl = /href="(http[^"]+)"/.exec(page)?.[1]?.replaceAll('&amp;', '&') ?? '';
  expect(authorizeUrl).toContain(`${new URL(h.slack.url).origin}/oauth/v2/authorize?`);
  const authorize = await fetch(authorizeUrl, { redirect: 'manual' });
  const redirect = authorize.headers.get('location') ?? '';
  const back = await fetch(redirect, { headers: { cookie } });
  return { status: back.status, page: await back.text(), redirect, cookie };
}

/** Installs the app into `workspace` through the real routes. */
export async function installInto(
  h: Pick<Harness, 'slack'>,
  base: string,
  workspace: FakeWorkspace,
): Promise<void> {
  h.slack.oauth.installAs(workspace);
  expect((await install(h, base)).status).toBe(200);
}

/** Sends an event of `teamId`'s workspace. */
export async function sendTeamEvent(
  h: Harness,
  teamId: string,
  event: Record<string, unknown> & { type: string },
): Promise<void> {
  const response = await postEvent(h.url, SECRET, eventEnvelope(event, { teamId }));
  expect(response.status).toBe(200);
}

/** Mentions the bot in `C<team>` as `U<team>`; resolves with the message's ts. */
export async function mentionIn(h: Harness, teamId: string, text: string): Promise<string> {
  const ts = nextTs();
  await sendTeamEvent(
    h,
    teamId,
    appMentionEvent({ user: `U${teamId}`, channel: `C${teamId}`, text: `<@UBOT> ${text}`, ts, team: teamId }),
  );
  return ts;
}

/** The workspace whose token a call carried, and the method: what a test compares to the team expected. */
export function tokenTeams(h: Harness, calls: readonly SlackCall[]): [string, string | undefined][] {
  return calls.map((call) => [call.method, h.slack.oauth.teamOf(call.token)]);
}
