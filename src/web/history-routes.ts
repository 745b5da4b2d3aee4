import { type Context, Hono } from 'hono';
import { html } from 'hono/html';
import { stream } from 'hono/streaming';
import type { AuditEventFilter, AuditEventRow } from '../approvals/audit-queries.js';
import { type StreamFormat, streamEvents } from '../audit/audit-export.js';
import type { ConsoleSession } from '../console/ports.js';
import { describeError } from '../errors.js';
import { type AuditRequest, DEFAULT_PAGE_SIZE, parseAuditRequest, queryString } from './audit-filter.js';
import { NOT_PERMITTED } from './console-actions.js';
import { type ConsoleDeps, type ConsoleEnv, rolesOf } from './console-deps.js';
import { apiError } from './decide-routes.js';
import { auditEventView, chainStateView, readableRun } from './history-views.js';
import { historyPage, historyProblem, runPage } from './pages/history-page.js';
import { page } from './pages/layout.js';

/** Events read per query while an export streams. */
const EXPORT_PAGE = 1000;

/**
 * The history of the workspace for admins and auditors (the filtered audit log, its chain's verification, its
 * export) and a run's timeline, with the JSON API over the same handlers. Anyone else gets 403, as for a run
 * they may not see.
 */
export function historyRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const who = async (session: ConsoleSession) => ({ session, roles: await rolesOf(deps, session) });
  const auditor = async (c: Context<ConsoleEnv>) => (await rolesOf(deps, c.get('session'))).auditor;
  const refusedPage = async (c: Context<ConsoleEnv>) =>
    c.html(page({ title: 'Not found', who: await who(c.get('session')) }, notPermitted()), 403);
  const refusedApi = (c: Context<ConsoleEnv>) => apiError(c, 403, NOT_PERMITTED.code, NOT_PERMITTED.message);
  const readRequest = (c: Context<ConsoleEnv>) => parseAuditRequest(c.req.query(), deps.clock.now());
  const eventsOf = async (session: ConsoleSession, request: AuditRequest) => {
    const found = await deps.queries.eventPage(
      { ...request.filter, teamId: session.teamId },
      {
        limit: request.limit,
        order: 'newest',
        ...(request.cursor === undefined ? {} : { cursor: request.cursor }),
      },
    );
    return { events: found.items.map(auditEventView), nextCursor: found.nextCursor };
  };

  app.get('/history', async (c) => {
    if (!(await auditor(c))) return refusedPage(c);
    const session = c.get('session');
    const frame = { title: 'History', who: await who(session), current: 'history' as const };
    const parsed = readRequest(c);
    if (!parsed.ok) return c.html(page(frame, historyProblem(c.req.query(), parsed.message)), 400);
    const { request } = parsed;
    const chain = c.req.query('verify') === 'now' ? await deps.chainCheck.now() : deps.chainCheck.latest();
    const { events, nextCursor } = await eventsOf(session, request);
    const limit = request.limit === DEFAULT_PAGE_SIZE ? {} : { limit: request.limit };
    const older = nextCursor === null ? null : queryString(request.given, { cursor: nextCursor, ...limit });
    return c.html(page(frame, historyPage({ request, events, older, chain: chainStateView(chain) })));
  });

  app.get('/api/audit', async (c) => {
    if (!(await auditor(c))) return refusedApi(c);
    const parsed = readRequest(c);
    if (!parsed.ok) return apiError(c, 400, 'bad_filter', parsed.message);
    const { events, nextCursor } = await eventsOf(c.get('session'), parsed.request);
    return c.json({ items: events, nextCursor: nextCursor === null ? null : String(nextCursor) });
  });

  app.get('/api/audit/verify', async (c) => {
    if (!(await auditor(c))) return refusedApi(c);
    return c.json(chainStateView(await deps.chainCheck.now()));
  });

  app.get('/api/audit/export', async (c) => {
    if (!(await auditor(c))) return refusedApi(c);
    const format = c.req.query('format');
    if (format !== 'csv' && format !== 'jsonl')
      return apiError(c, 400, 'bad_filter', 'format must be csv or jsonl.');
    const parsed = readRequest(c);
    if (!parsed.ok) return apiError(c, 400, 'bad_filter', parsed.message);
    return exportStream(c, deps, { ...parsed.request.filter, teamId: c.get('session').teamId }, format);
  });

  app.get('/runs/:runId', async (c) => {
    const session = c.get('session');
    const view = await readableRun(deps, session, c.req.param('runId'));
    if (!view) return refusedPage(c);
    const roles = await rolesOf(deps, session);
    return c.html(
      page(
        { title: 'Run', who: await who(session), ...(roles.auditor ? { current: 'history' as const } : {}) },
        runPage(view, roles.auditor),
      ),
    );
  });

  app.get('/api/runs/:runId', async (c) => {
    const view = await readableRun(deps, c.get('session'), c.req.param('runId'));
    return view ? c.json(view) : refusedApi(c);
  });

  return app;
}

/**
 * The filtered log, oldest first, as `npm run audit -- export` writes it (the same exporter), streamed a page
 * of events at a time so a long log is never held in memory.
 */
function exportStream(
  c: Context<ConsoleEnv>,
  deps: ConsoleDeps,
  filter: AuditEventFilter & { teamId: string },
  format: StreamFormat,
): Response {
  async function* pages(): AsyncGenerator<AuditEventRow[]> {
    let cursor: number | undefined;
    do {
      const found = await deps.queries.eventPage(filter, {
        limit: EXPORT_PAGE,
        order: 'oldest',
        ...(cursor === undefined ? {} : { cursor }),
      });
      yield found.items;
      cursor = found.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }
  const day = new Date(deps.clock.now()).toISOString().slice(0, 10);
  c.header(
    'content-type',
    format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8',
  );
  c.header('content-disposition', `attachment; filename="audit-${day}.${format}"`);
  return stream(
    c,
    async (out) => {
      for await (const text of streamEvents(pages(), format)) {
        // The client went away: no more pages are read for it.
        if (out.aborted) break;
        await out.write(text);
      }
    },
    async (error) => {
      // The status is sent already: the download ends short, and the log says why.
      deps.logger.error('audit export failed', { error: describeError(error) });
    },
  );
}

function notPermitted() {
  return html`<h1>Not found</h1><p>${NOT_PERMITTED.message}</p><p><a href="/console">← Decide</a></p>`;
}
