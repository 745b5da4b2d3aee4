import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { describeError } from '../errors.js';
import { chartsRoutes } from './charts-routes.js';
import type { ConsoleDeps, ConsoleEnv } from './console-deps.js';
import { consoleHeaders, loopbackUnlessPublic, requireSession } from './console-security.js';
import { CONSOLE_CSS } from './console-style.js';
import { apiError, decideRoutes } from './decide-routes.js';
import { historyRoutes } from './history-routes.js';
import { policyRoutes } from './policy-routes.js';
import { signInRoutes } from './sign-in-routes.js';
import { slackSignInRoutes } from './slack-sign-in-routes.js';

/** The largest request body the console takes (a pasted policy, edited arguments). */
const CONSOLE_BODY_LIMIT = 256 * 1024;

/**
 * The web console under `/console`: sign-in, then the decide pages and the JSON API for signed-in people.
 * Served by the bot's own HTTP server next to the Slack endpoints.
 */
export function createConsoleApp(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>().basePath('/console');
  app.use(loopbackUnlessPublic(deps));
  app.use(consoleHeaders());
  app.use(
    bodyLimit({
      maxSize: CONSOLE_BODY_LIMIT,
      onError: (c) =>
        c.json({ error: { code: 'too_large', message: 'The request body is too large.' } }, 413),
    }),
  );
  app.get('/assets/console.css', (c) =>
    c.body(CONSOLE_CSS, 200, { 'content-type': 'text/css; charset=utf-8', 'cache-control': 'max-age=3600' }),
  );
  app.route('/', signInRoutes(deps));
  app.route('/', slackSignInRoutes(deps));
  app.use(
    '/api/*',
    requireSession(deps, (c) => apiError(c, 401, 'signed_out', 'Sign in first (GET /console/login).')),
  );
  app.use(
    '*',
    requireSession(deps, (c) => c.redirect('/console/login', 303)),
  );
  app.route('/', decideRoutes(deps));
  app.route('/', chartsRoutes(deps));
  app.route('/', policyRoutes(deps));
  app.route('/', historyRoutes(deps));
  app.notFound((c) => c.json({ error: { code: 'not_found', message: 'There is nothing here.' } }, 404));
  app.onError((error, c) => {
    deps.logger.error('console request failed', { path: c.req.path, error: describeError(error) });
    return c.json(
      { error: { code: 'internal', message: 'Something went wrong on the bot; nothing changed.' } },
      500,
    );
  });
  return app;
}

/** The console as a Node request handler, for the bot's HTTP server. */
export function consoleRequestListener(
  deps: ConsoleDeps,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return getRequestListener(createConsoleApp(deps).fetch);
}
