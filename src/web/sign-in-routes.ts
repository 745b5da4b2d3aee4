import { Hono } from 'hono';
import { html } from 'hono/html';
import type { ConsoleDeps, ConsoleEnv } from './console-deps.js';
import { clearSessionCookie, requireSession, setSessionCookie } from './console-security.js';
import { page } from './pages/layout.js';

/**
 * Signing in and out: the sign-in page, the one-time link (shown first, used by a POST, so a link preview
 * fetching the URL does not use it up), and sign-out.
 */
export function signInRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get('/login', (c) => {
    const refused = c.req.query('refused');
    return c.html(
      page(
        { title: 'Sign in', notice: refused ? (REFUSALS[refused] ?? REFUSALS.failed) : undefined },
        html`<h1>Sign in</h1>
${
  deps.slackSignIn
    ? html`<p><a class="button" href="/console/login/slack">Sign in with Slack</a></p>`
    : html`<p>Sign in with Slack is off (set <code>SLACK_CLIENT_ID</code> and <code>SLACK_CLIENT_SECRET</code>).</p>`
}
<p class="muted">On the bot's server, <code>npm run console -- link --user U0123ABCD</code> prints a link that signs
that person in once, within 10 minutes.</p>`,
      ),
    );
  });

  app.get('/link/:token', (c) =>
    c.html(
      page(
        { title: 'Sign in' },
        html`<h1>Sign in with a one-time link</h1>
<form method="post" action="/console/link/${c.req.param('token')}">
  <button type="submit" class="approve">Sign in</button>
</form>
<p class="muted">The link works once, within 10 minutes of being issued.</p>`,
      ),
    ),
  );

  app.post('/link/:token', async (c) => {
    // A link that names no workspace opens the installed one's (asked only then); none known, a workspace of
    // nobody's (it sees nothing).
    const installed = () => deps.installedTeam().catch(() => '');
    const redeemed = await deps.access.redeemLink(c.req.param('token'), installed);
    if (!redeemed.ok) return c.redirect('/console/login?refused=link', 303);
    setSessionCookie(c, deps, redeemed.opened.token);
    return c.redirect('/console', 303);
  });

  app.post(
    '/logout',
    requireSession(deps, (c) => c.redirect('/console/login', 303)),
    async (c) => {
      await deps.access.signOut(c.get('sessionToken'), c.get('session'));
      clearSessionCookie(c);
      return c.redirect('/console/login', 303);
    },
  );

  return app;
}

/** What the sign-in page says after a refused attempt (by the code in its address). */
export const REFUSALS: Record<string, string> = {
  link: 'That sign-in link is unknown, used already or expired. Ask for a new one.',
  workspace: 'You signed in to another workspace than the one the bot is installed in.',
  state: 'The sign-in took too long or came from another browser. Please start again.',
  slack: 'Slack did not confirm who you are. Please try again.',
  failed: 'Signing in failed. Please try again.',
};
