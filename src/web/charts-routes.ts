import { Hono } from 'hono';
import { html } from 'hono/html';
import {
  buildTrends,
  DAY_MS,
  MAX_TREND_DAYS,
  type TrendWindow,
  wholeDays,
} from '../approvals/approval-trends.js';
import { parseTimePoint } from '../audit/time-filter.js';
import { type ConsoleDeps, type ConsoleEnv, rolesOf } from './console-deps.js';
import { apiError } from './decide-routes.js';
import { chartsPage } from './pages/charts-page.js';
import { page } from './pages/layout.js';

/** The window when the address names none: the last 30 days. */
const DEFAULT_SPAN_DAYS = 30;

const NOT_AUDITOR = 'The charts are for admins and auditors (AUDITOR_USER_IDS).';

/** The charts page and `GET /api/stats` (admins and auditors), over the same figures of the person's workspace. */
export function chartsRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();

  app.get('/api/stats', async (c) => {
    const session = c.get('session');
    if (!(await rolesOf(deps, session)).auditor) return apiError(c, 403, 'not_permitted', NOT_AUDITOR);
    const window = trendWindow(session.teamId, c.req.query('since'), c.req.query('until'), deps.clock.now());
    if (!window.ok) return apiError(c, 400, 'bad_range', window.message);
    return c.json(buildTrends(await deps.queries.trends(window.window), window.window));
  });

  app.get('/charts', async (c) => {
    const session = c.get('session');
    const roles = await rolesOf(deps, session);
    const frame = { title: 'Charts', who: { session, roles }, current: 'charts' as const };
    if (!roles.auditor) return c.html(page(frame, html`<h1>Charts</h1><p>${NOT_AUDITOR}</p>`), 403);
    const since = c.req.query('since');
    const until = c.req.query('until');
    const window = trendWindow(session.teamId, since, until, deps.clock.now());
    if (!window.ok)
      return c.html(page({ ...frame, notice: window.message }, chartsPage(undefined, { since, until })), 400);
    const trends = buildTrends(await deps.queries.trends(window.window), window.window);
    return c.html(page(frame, chartsPage(trends, { since, until })));
  });

  return app;
}

/**
 * The window of the charts from the address: `since` and `until` as `npm run audit` reads them (a span such as
 * `30d`, or a date; a bare `until` date includes its day), by default the last 30 days, at most 366 days long;
 * widened to whole UTC days (the figures are kept per day).
 */
export function trendWindow(
  teamId: string,
  sinceText: string | undefined,
  untilText: string | undefined,
  now: number,
): { ok: true; window: TrendWindow } | { ok: false; message: string } {
  const since = sinceText ? parseTimePoint(sinceText, now) : now - DEFAULT_SPAN_DAYS * DAY_MS;
  const until = untilText ? parseTimePoint(untilText, now, 'end') : now;
  if (since === undefined || until === undefined)
    return { ok: false, message: 'since and until must be dates such as 2026-05-01, or spans such as 30d.' };
  if (since > until) return { ok: false, message: 'since must come before until.' };
  if (until - since > MAX_TREND_DAYS * DAY_MS)
    return { ok: false, message: `The range may span at most ${MAX_TREND_DAYS} days.` };
  return { ok: true, window: wholeDays({ teamId, since, until }) };
}
