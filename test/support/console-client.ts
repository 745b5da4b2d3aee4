import type { Page } from 'playwright-core';
import { runConsoleCli } from '../../src/cli/console-cli.js';
import { waitUntil } from './wait.js';

/** A person signed in to the web console through a one-time link, with their cookie and CSRF token. */
export interface ConsoleClient {
  base: string;
  cookie: string;
  csrf: string;
  get(path: string): Promise<Response>;
  /** A JSON POST with the CSRF header (unless `csrf` says otherwise). */
  postJson(path: string, body: unknown, csrf?: string | null): Promise<Response>;
  /** A form POST as a page sends it, with the CSRF field (unless `csrf` says otherwise). */
  postForm(path: string, fields: Record<string, string>, csrf?: string | null): Promise<Response>;
}

/** Issues a one-time link as `npm run console -- link` does, on the bot's database; returns the printed URL. */
export async function issueLink(
  env: Record<string, string>,
  user: string,
  team?: string,
): Promise<{ url: string; code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await runConsoleCli(['link', '--user', user, ...(team ? ['--team', team] : [])], env, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  });
  return { url: out[0] ?? '', code, out, err };
}

/**
 * Waits until the console on `origin` answers: with worker threads it is served by a worker of its own, which
 * is ready a little after the bot answers /healthz (till then the console says 503).
 */
export async function consoleReady(origin: string): Promise<void> {
  await waitUntil(async () => (await fetch(`${origin}/console/login`)).status !== 503, {
    timeoutMs: 30_000,
    intervalMs: 50,
    message: 'the console never became ready',
  });
}

/** Signs `user` in at the bot on `origin` (http://127.0.0.1:PORT) with a fresh link (of `team`, when given). */
export async function signInWithLink(
  origin: string,
  env: Record<string, string>,
  user: string,
  team?: string,
): Promise<ConsoleClient> {
  await consoleReady(origin);
  const port = new URL(origin).port;
  const link = await issueLink({ ...env, PORT: port }, user, team);
  if (link.code !== 0) throw new Error(link.err.join('\n'));
  const redeemed = await fetch(link.url, { method: 'POST', redirect: 'manual' });
  const cookie = (redeemed.headers.get('set-cookie') ?? '').split(';')[0] ?? '';
  if (redeemed.status !== 303 || !cookie) throw new Error(`the link answered ${redeemed.status}`);
  const me = (await (await fetch(`${origin}/console/api/me`, { headers: { cookie } })).json()) as {
    csrfToken: string;
  };
  return consoleClient(origin, cookie, me.csrfToken);
}

/**
 * Signs `user` in on a browser page as a person does: opens a fresh one-time link and clicks "Sign in"; resolves
 * with the link (to try it a second time) once the page it lands on has loaded.
 */
export async function signInInBrowser(
  page: Page,
  origin: string,
  env: Record<string, string>,
  user: string,
): Promise<string> {
  const link = await issueLink({ ...env, PORT: new URL(origin).port }, user);
  if (link.code !== 0) throw new Error(link.err.join('\n'));
  await page.goto(link.url);
  await Promise.all([
    page.waitForURL((url) => url.pathname !== new URL(link.url).pathname),
    clickSignIn(page),
  ]);
  return link.url;
}

/** Clicks the one-time link page's "Sign in" button. */
export function clickSignIn(page: Page): Promise<void> {
  return page.getByRole('button', { name: 'Sign in' }).click();
}

export function consoleClient(base: string, cookie: string, csrf: string): ConsoleClient {
  const headers = (token: string | null) => ({ cookie, ...(token ? { 'x-csrf-token': token } : {}) });
  return {
    base,
    cookie,
    csrf,
    get: (path) => fetch(`${base}${path}`, { headers: { cookie }, redirect: 'manual' }),
    postJson: (path, body, token = csrf) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { ...headers(token), 'content-type': 'application/json' },
        body: JSON.stringify(body),
        redirect: 'manual',
      }),
    postForm: (path, fields, token = csrf) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...fields, ...(token ? { csrf: token } : {}) }),
        redirect: 'manual',
      }),
  };
}
