import { randomBytes } from 'node:crypto';
import { expect } from 'vitest';
import type { FakeSlack } from './fake-slack.js';
import type { FakeWorkspace } from './fake-slack-oauth.js';

/** The app's client ID and secret, as the fake Slack and the bot both know them. */
export const OAUTH_CLIENT = { clientId: '111.222', clientSecret: 'client-secret' };

/** The settings of a bot that installs into several workspaces (OAuth mode), with fresh secrets. */
export function oauthEnv(): Record<string, string> {
  return {
    SLACK_BOT_TOKEN: '',
    // Each workspace names its own admins: a harness's ADMIN_USER_IDS would be refused at start-up.
    ADMIN_USER_IDS: '',
    SLACK_CLIENT_ID: OAUTH_CLIENT.clientId,
    SLACK_CLIENT_SECRET: OAUTH_CLIENT.clientSecret,
    SLACK_STATE_SECRET: randomBytes(24).toString('hex'),
    TOKEN_ENCRYPTION_KEY: randomBytes(32).toString('base64'),
  };
}

/** Lets the fake Slack install the app for the bot on `base` (its origin). */
export function enableInstalls(slack: FakeSlack, base: string): void {
  slack.oauth.enable({ ...OAUTH_CLIENT, redirectUrl: `${base}/slack/oauth_redirect` });
}

/** One installer's browser: the install page, Slack's authorize page, the redirect back (cookies carried by hand). */
export async function install(
  slack: FakeSlack,
  base: string,
): Promise<{ status: number; page: string; redirect: string; cookie: string }> {
  const start = await fetch(`${base}/slack/install`);
  const page = await start.text();
  const cookie = (start.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  const authorizeUrl = /href="(http[^"]+)"/.exec(page)?.[1]?.replaceAll('&amp;', '&') ?? '';
  expect(authorizeUrl).toContain(`${new URL(slack.url).origin}/oauth/v2/authorize?`);
  const authorize = await fetch(authorizeUrl, { redirect: 'manual' });
  const redirect = authorize.headers.get('location') ?? '';
  const back = await fetch(redirect, { headers: { cookie } });
  return { status: back.status, page: await back.text(), redirect, cookie };
}

/** Installs the app in `workspace` and expects it stored. */
export async function installWorkspace(
  slack: FakeSlack,
  base: string,
  workspace: FakeWorkspace,
): Promise<void> {
  slack.oauth.installAs(workspace);
  const installed = await install(slack, base);
  expect(installed.status).toBe(200);
}
