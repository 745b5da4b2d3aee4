import { getConnInfo } from '@hono/node-server/conninfo';
import type { Context, MiddlewareHandler } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { secureHeaders } from 'hono/secure-headers';
import { sameSecret } from '../console/console-access.js';
import { outOfConsoleReach } from '../console/console-reach.js';
import type { ConsoleDeps, ConsoleEnv } from './console-deps.js';

export const SESSION_COOKIE = 'console_session';

/**
 * Every answer's headers: a strict Content-Security-Policy (every asset from the bot itself, no inline script
 * or style, no framing), no referrer, no sniffing.
 */
export const consoleHeaders = (): MiddlewareHandler =>
  secureHeaders({
    contentSecurityPolicy: {
      defaultSrc: ["'none'"],
      scriptSrc: ["'self'"],
      styleSrc: ["'self'"],
      imgSrc: ["'self'"],
      connectSrc: ["'self'"],
      formAction: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'none'"],
    },
    referrerPolicy: 'no-referrer',
    crossOriginResourcePolicy: 'same-origin',
  });

/** Without CONSOLE_URL the console answers only on this machine (for the one-time link); elsewhere it does not exist. */
export function loopbackUnlessPublic(deps: Pick<ConsoleDeps, 'config'>): MiddlewareHandler {
  return async (c, next) => {
    if (outOfConsoleReach(deps.config.publicUrl, getConnInfo(c).remote.address))
      return c.text('Not found', 404);
    return next();
  };
}

/** The session cookie: HttpOnly, SameSite=Lax, Secure when the console's public URL is https. */
export function setSessionCookie(c: Context, deps: Pick<ConsoleDeps, 'config'>, token: string): void {
  setCookie(c, SESSION_COOKIE, token, {
    path: '/console',
    httpOnly: true,
    sameSite: 'Lax',
    secure: secureCookies(deps),
  });
}

/** Cookies are sent over HTTPS only when the console's public URL is https. */
export function secureCookies(deps: Pick<ConsoleDeps, 'config'>): boolean {
  return deps.config.publicUrl?.startsWith('https:') ?? false;
}

export function clearSessionCookie(c: Context): void {
  deleteCookie(c, SESSION_COOKIE, { path: '/console' });
}

/**
 * Loads the session of the request's cookie; without one, `refuse` answers (401 for the API, the sign-in page
 * for pages). A state-changing request must also carry the session's CSRF token (header `X-CSRF-Token` or form
 * field `csrf`), else 403.
 */
export function requireSession(
  deps: Pick<ConsoleDeps, 'access'>,
  refuse: (c: Context) => Response | Promise<Response>,
): MiddlewareHandler<ConsoleEnv> {
  return async (c, next) => {
    // Checked once per request, however many routes ask.
    if (c.get('session')) return next();
    const token = getCookie(c, SESSION_COOKIE);
    const session = await deps.access.session(token);
    if (!session || !token) return refuse(c);
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') {
      const given = c.req.header('x-csrf-token') ?? (await formField(c, 'csrf'));
      if (!sameSecret(given, session.csrfToken))
        return c.json(
          {
            error: {
              code: 'csrf',
              message: 'The request lacks the form token; reload the page and try again.',
            },
          },
          403,
        );
    }
    c.set('session', session);
    c.set('sessionToken', token);
    return next();
  };
}

/** A field of a submitted form (parsed once and kept by Hono); undefined for other bodies. */
export async function formField(c: Context, name: string): Promise<string | undefined> {
  const type = c.req.header('content-type') ?? '';
  if (!type.startsWith('application/x-www-form-urlencoded') && !type.startsWith('multipart/form-data'))
    return undefined;
  const body = await c.req.parseBody();
  const value = body[name];
  return typeof value === 'string' ? value : undefined;
}
