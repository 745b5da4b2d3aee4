import type { IncomingMessage, ServerResponse } from 'node:http';
import { getRequestListener } from '@hono/node-server';
import { Hono } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { BODY_TOO_LARGE, CONSOLE_BODY_LIMIT } from '../console/console-limits.js';
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
      onError: (c) => c.json(BODY_TOO_LARGE, 413),
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

/**
 * The console as a Fetch handler, for a thread that gets its requests relayed (the worker serving the console);
 * `remoteAddress` is the client's address, which the loopback gate reads.
 */
export type ConsoleFetch = (request: Request, remoteAddress: string | undefined) => Promise<Response>;

export function consoleFetch(deps: ConsoleDeps): ConsoleFetch {
  const app = createConsoleApp(deps);
  // Where Hono's Node adapter puts the connection, and `getConnInfo` looks for it.
  return async (request, remoteAddress) => app.fetch(request, { incoming: { socket: { remoteAddress } } });
}

/** The console as a Node request handler, for the bot's HTTP server. */
export function consoleRequestListener(
  deps: ConsoleDeps,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  // The bot's own fetch calls (the model client, Slack) keep Node's Request and Response: the adapter would
  // otherwise put lighter copies in their place for the whole process.
  return getRequestListener(createConsoleApp(deps).fetch, { overrideGlobalObjects: false });
}
