import { Hono } from 'hono';
import { html } from 'hono/html';
import type { ApprovalRecord } from '../approvals/approval.js';
import { prettyJson } from '../approvals/argument-edit-service.js';
import type { ConsoleSession } from '../console/ports.js';
import { batchInput, batchNotice, batchRedirect, decideBatchFromWeb } from './batch-decision.js';
import {
  type DecisionInput,
  decidableRequests,
  decideFromWeb,
  NOT_PERMITTED,
  requestDetail,
  withVotes,
} from './console-actions.js';
import { type ConsoleDeps, type ConsoleEnv, rolesOf } from './console-deps.js';
import { formField } from './console-security.js';
import { BAD_CURSOR, decodeCursor, encodeCursor, startAfter } from './list-cursor.js';
import { decideList, requestPage } from './pages/decide-page.js';
import { page } from './pages/layout.js';

const MAX_LIMIT = 100;
/** Requests on one decide page. */
const DECIDE_PAGE = 50;

/** Sentences for the outcome of a decision made on a page (the page reloads with its code). */
const OUTCOMES: Record<string, string> = {
  approved: 'Approved. The run goes on, and every copy of the card in Slack says so.',
  executing: 'Approved. The run goes on, and every copy of the card in Slack says so.',
  rejected: 'Rejected. The requester is told in the thread.',
  counted: 'Your approval is counted; the request waits for more approvals.',
  already_decided: 'This request was decided already; nothing changed.',
  already_voted: 'You have already approved this request.',
  invalid_arguments: 'The edited arguments do not fit the tool; nothing changed.',
  not_permitted: NOT_PERMITTED.message,
  not_recorded: 'Your decision could not be recorded; nothing changed. Try again.',
  nothing_selected: 'Nothing was selected, so nothing changed. Tick the requests first.',
  break_glass_refused:
    'Break glass was refused: the justification must be 10 to 500 characters, and the tool must allow it. Nothing changed.',
};

/** The decide page and a request's page, and the JSON API over the same handlers. */
export function decideRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const who = async (session: ConsoleSession) => ({ session, roles: await rolesOf(deps, session) });

  app.get('/', async (c) => {
    const session = c.get('session');
    const after = decodeCursor(c.req.query('cursor'));
    if (after === 'invalid')
      return c.html(
        page({ title: 'Decide', who: await who(session) }, html`<h1>Decide</h1><p>${BAD_CURSOR}</p>`),
        400,
      );
    const all = await decidableRequests(deps, session);
    // A page at a time: each request carries its forms, so a long queue would make a page of megabytes.
    const offset = startAfter(all, after);
    const records = all.slice(offset, offset + DECIDE_PAGE);
    const views = await withVotes(deps, records);
    const requests = views.map((view, i) => ({ view, draft: prettyJson(records[i]?.arguments ?? '') }));
    return c.html(
      page(
        {
          title: 'Decide',
          who: await who(session),
          current: 'decide',
          notice: OUTCOMES[c.req.query('outcome') ?? ''] ?? batchNotice((name) => c.req.query(name)),
        },
        decideList(
          { requests, offset, total: all.length, next: nextOfPending(all, offset, records.length) },
          session,
          deps.clock.now(),
        ),
      ),
    );
  });

  app.get('/approvals/:id', async (c) => {
    const session = c.get('session');
    const view = await requestDetail(deps, session, c.req.param('id'));
    if (!view) return c.html(page({ title: 'Not found', who: await who(session) }, notFound()), 403);
    return c.html(
      page(
        {
          title: view.tool,
          who: await who(session),
          current: 'decide',
          notice: OUTCOMES[c.req.query('outcome') ?? ''],
        },
        requestPage(view, session, deps.clock.now()),
      ),
    );
  });

  app.post('/approvals/:id/decision', async (c) => {
    const id = c.req.param('id');
    const decision = await formField(c, 'decision');
    if (decision !== 'approve' && decision !== 'reject') return c.text('Unknown decision', 400);
    const edited = await formField(c, 'arguments');
    const input: DecisionInput = {
      decision,
      reason: await formField(c, 'reason'),
      standing: (await formField(c, 'standing')) === 'thread',
      breakGlass: await formField(c, 'justification'),
      ...(edited !== undefined ? { arguments: edited } : {}),
    };
    const answer = await decideFromWeb(deps, c.get('session'), id, input);
    // Back to the request's page, which shows what came of it (a refused person is sent to their list).
    const back = answer.status === 403 ? '/console' : `/console/approvals/${encodeURIComponent(id)}`;
    return c.redirect(`${back}?outcome=${answer.code}`, 303);
  });

  // The decide page's batch form: the ticked requests (`ids`, repeated), one decision and one reason for all.
  app.post('/decisions', async (c) => {
    const form = await c.req.parseBody({ all: true }).catch(() => ({}) as Record<string, unknown>);
    const ids = form.ids === undefined ? [] : [form.ids].flat().filter((id) => typeof id === 'string');
    const input = batchInput({ ids, decision: form.decision, reason: form.reason });
    if (!input) return c.redirect('/console?outcome=nothing_selected', 303);
    const answer = await decideBatchFromWeb(deps, c.get('session'), input);
    return c.redirect(batchRedirect(answer, input.decision), 303);
  });

  app.post('/api/approvals/decisions', async (c) => {
    const input = batchInput(await c.req.json().catch(() => undefined));
    if (!input)
      return apiError(
        c,
        400,
        'bad_request',
        'Send {"ids":[...] (1 to 50 request ids),"decision":"approve"|"reject","reason"?:string} as JSON.',
      );
    return c.json(await decideBatchFromWeb(deps, c.get('session'), input));
  });

  app.get('/api/me', async (c) => {
    const session = c.get('session');
    return c.json({
      user: session.userId,
      team: session.teamId,
      via: session.via,
      roles: await rolesOf(deps, session),
      csrfToken: session.csrfToken,
    });
  });

  app.get('/api/approvals', async (c) => {
    const session = c.get('session');
    const status = c.req.query('status') ?? 'pending';
    const limit = Math.min(Math.max(Number(c.req.query('limit') ?? 50) || 50, 1), MAX_LIMIT);
    if (status !== 'pending' && status !== 'decided')
      return apiError(c, 400, 'bad_status', 'status must be pending or decided.');
    const after = decodeCursor(c.req.query('cursor'));
    if (after === 'invalid') return apiError(c, 400, 'bad_cursor', BAD_CURSOR);
    if (status === 'pending') {
      const all = await decidableRequests(deps, session);
      const start = startAfter(all, after);
      const items = all.slice(start, start + limit);
      return c.json({
        items: await withVotes(deps, items),
        total: all.length,
        nextCursor: nextOfPending(all, start, items.length),
      });
    }
    // Admins and auditors see every decided request; anyone else those they asked for or voted on.
    const everyone = (await rolesOf(deps, session)).auditor;
    const decided = await deps.queries.decided({
      teamId: session.teamId,
      limit,
      ...(after ? { after } : {}),
      ...(everyone ? {} : { userId: session.userId }),
    });
    return c.json({
      items: await withVotes(deps, decided.items),
      total: decided.total,
      nextCursor: decided.next ? encodeCursor(decided.next) : null,
    });
  });

  app.get('/api/approvals/:id', async (c) => {
    const view = await requestDetail(deps, c.get('session'), c.req.param('id'));
    return view ? c.json(view) : apiError(c, 403, NOT_PERMITTED.code, NOT_PERMITTED.message);
  });

  app.post('/api/approvals/:id/decision', async (c) => {
    const body = await c.req.json().catch(() => undefined);
    const input = decisionInput(body);
    if (!input)
      return apiError(
        c,
        400,
        'bad_request',
        'Send {"decision":"approve"|"reject","reason"?:string,"arguments"?:string,"standing"?:boolean,"breakGlass"?:string} as JSON.',
      );
    const answer = await decideFromWeb(deps, c.get('session'), c.req.param('id'), input);
    return answer.status === 200
      ? c.json({ outcome: answer.code, message: answer.message })
      : apiError(c, answer.status, answer.code, answer.message);
  });

  return app;
}

/** The cursor past a page of the pending list (`count` items from `start`), or null when none follows. */
function nextOfPending(all: readonly ApprovalRecord[], start: number, count: number): string | null {
  const last = all[start + count - 1];
  return start + count < all.length && last ? encodeCursor({ at: last.createdAt, id: last.id }) : null;
}

function decisionInput(body: unknown): DecisionInput | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { decision, reason, arguments: args, standing, breakGlass } = body as Record<string, unknown>;
  if (decision !== 'approve' && decision !== 'reject') return undefined;
  if (reason !== undefined && typeof reason !== 'string') return undefined;
  if (args !== undefined && typeof args !== 'string') return undefined;
  if (standing !== undefined && typeof standing !== 'boolean') return undefined;
  // Only an approval may carry edited arguments or stand for the thread, and not both at once.
  if (decision === 'reject' && (args !== undefined || standing)) return undefined;
  if (args !== undefined && standing) return undefined;
  // Breaking glass approves the call as it is, by itself.
  if (breakGlass !== undefined && (typeof breakGlass !== 'string' || decision !== 'approve'))
    return undefined;
  if (breakGlass !== undefined && (args !== undefined || standing)) return undefined;
  return {
    decision,
    reason,
    standing: standing === true,
    ...(args !== undefined ? { arguments: args } : {}),
    ...(breakGlass !== undefined ? { breakGlass } : {}),
  };
}

/** A JSON error: a code to branch on and a sentence for people. */
export function apiError(
  c: { json: (body: unknown, status: 400 | 401 | 403 | 404 | 409 | 500) => Response },
  status: 400 | 401 | 403 | 404 | 409 | 500,
  code: string,
  message: string,
): Response {
  return c.json({ error: { code, message } }, status);
}

function notFound() {
  return html`<h1>Not found</h1><p>${NOT_PERMITTED.message}</p><p><a href="/console">← Decide</a></p>`;
}
