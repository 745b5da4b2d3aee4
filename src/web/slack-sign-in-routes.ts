import type { Context } from 'hono';
import { Hono } from 'hono';
import { deleteCookie, getSignedCookie, setSignedCookie } from 'hono/cookie';
import { newSecret, type Person, type SignInRefusal } from '../console/console-access.js';
import type { SlackSignIn } from '../console/ports.js';
import type { ConsoleDeps, ConsoleEnv } from './console-deps.js';
import { secureCookies, setSessionCookie } from './console-security.js';

/** The cookie binding a sign-in's state and nonce to the browser that started it. */
const SIGN_IN_COOKIE = 'console_sign_in';
/** How long a person has to come back from Slack's authorize page. */
const SIGN_IN_COOKIE_SECONDS = 10 * 60;
const CALLBACK_PATH = '/console/auth/callback';

/** The code the sign-in page reads (its REFUSALS) for each refusal the audit log records. */
const PAGE_CODE: Partial<Record<SignInRefusal, string>> = {
  state_mismatch: 'state',
  nonce_mismatch: 'state',
  slack_refused: 'slack',
  wrong_workspace: 'workspace',
};

/**
 * Sign in with Slack (OpenID Connect): `/login/slack` sends the person to Slack's authorize page with a random
 * state and nonce, kept in a short-lived cookie signed with the app's client secret; `/auth/callback` checks the
 * state, has Slack say who the code signs in, checks the nonce and the workspace, then opens a session. Every
 * refusal is audited (`console.refused`) and shown on the sign-in page.
 */
export function slackSignInRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const enabled = (): { signIn: SlackSignIn; secret: string } | undefined =>
    deps.slackSignIn && deps.config.slackSignIn
      ? { signIn: deps.slackSignIn, secret: deps.config.slackSignIn.clientSecret }
      : undefined;

  app.get('/login/slack', async (c) => {
    const on = enabled();
    if (!on) return c.redirect('/console/login', 303);
    const state = newSecret();
    const nonce = newSecret();
    await setSignedCookie(c, SIGN_IN_COOKIE, `${state}.${nonce}`, on.secret, {
      path: '/console',
      httpOnly: true,
      // Lax: the cookie comes back on Slack's top-level redirect to the callback.
      sameSite: 'Lax',
      secure: secureCookies(deps),
      maxAge: SIGN_IN_COOKIE_SECONDS,
    });
    return c.redirect(on.signIn.authorizeUrl({ redirectUri: redirectUri(c, deps), state, nonce }), 303);
  });

  app.get('/auth/callback', async (c) => {
    const on = enabled();
    if (!on) return c.redirect('/console/login', 303);
    const bound = await getSignedCookie(c, on.secret, SIGN_IN_COOKIE);
    // A state and nonce are used once, whatever comes of them.
    deleteCookie(c, SIGN_IN_COOKIE, { path: '/console' });
    const [state, nonce] = typeof bound === 'string' ? bound.split('.') : [];
    const given = c.req.query('state');
    if (!state || !nonce || given !== state) return refuse(c, deps, 'state_mismatch');
    const code = c.req.query('code');
    // Without a code Slack says why (`error=access_denied` when the person cancelled).
    if (!code) return refuse(c, deps, 'slack_refused', undefined, c.req.query('error') ?? 'no_code');
    const who = await on.signIn.identify(code, redirectUri(c, deps));
    if (!who.ok) return refuse(c, deps, 'slack_refused', undefined, who.problem);
    const person: Person = { teamId: who.teamId, enterpriseId: who.enterpriseId, userId: who.userId };
    if (who.nonce !== nonce) return refuse(c, deps, 'nonce_mismatch', person);
    const installed = await deps.installedTeam(person.teamId, who.enterpriseId).catch(() => undefined);
    if (installed === undefined) return refuse(c, deps, 'slack_refused', person, 'installed_team_unknown');
    if (person.teamId !== installed) return refuse(c, deps, 'wrong_workspace', person);
    const opened = await deps.access.signIn(person, 'slack');
    setSessionCookie(c, deps, opened.token);
    return c.redirect('/console', 303);
  });

  return app;
}

/** Records a refused sign-in and shows the sign-in page with a sentence saying why. */
async function refuse(
  c: Context,
  deps: ConsoleDeps,
  reason: SignInRefusal,
  person?: Person,
  slackProblem?: string,
): Promise<Response> {
  if (slackProblem) deps.logger.warn('Slack did not confirm a console sign-in', { problem: slackProblem });
  await deps.access.refused(reason, person);
  return c.redirect(`/console/login?refused=${PAGE_CODE[reason] ?? 'failed'}`, 303);
}

/** Where Slack sends the person back: under CONSOLE_URL, or this request's own origin (127.0.0.1 without it). */
function redirectUri(c: Context, deps: Pick<ConsoleDeps, 'config'>): string {
  return `${deps.config.publicUrl ?? new URL(c.req.url).origin}${CALLBACK_PATH}`;
}
