import { Hono } from 'hono';
import { html } from 'hono/html';
import { policyTable, summarizePolicy } from '../approvals/policy-summary.js';
import type { ConsoleSession } from '../console/ports.js';
import { type ConsoleDeps, type ConsoleEnv, rolesOf } from './console-deps.js';
import { formField } from './console-security.js';
import { apiError } from './decide-routes.js';
import { page } from './pages/layout.js';
import { policyPage } from './pages/policy-page.js';
import { replayCandidate, replayDays } from './policy-replay-run.js';

const NOT_ADMIN = 'The policy is for admins (ADMIN_USER_IDS).';

/** The policy in force as a table, and the replay of a pasted candidate over past requests (admins only). */
export function policyRoutes(deps: ConsoleDeps): Hono<ConsoleEnv> {
  const app = new Hono<ConsoleEnv>();
  const isAdmin = async (session: ConsoleSession) => (await rolesOf(deps, session)).admin;
  const frame = async (session: ConsoleSession) => ({
    title: 'Policy',
    who: { session, roles: await rolesOf(deps, session) },
    current: 'policy' as const,
  });
  /** The rules of the signed-in person's workspace: the file's own, with its section of `teams` if it has one. */
  const inForce = (teamId: string) => {
    const described = deps.policy.inForce().describe(teamId);
    const { source, defaults, tools, rules } = described;
    return {
      source,
      team: described.team ?? null,
      summary: summarizePolicy(source, defaults, tools, rules),
      tools: policyTable(described),
    };
  };

  app.get('/api/policy', async (c) => {
    const session = c.get('session');
    return (await isAdmin(session))
      ? c.json(inForce(session.teamId))
      : apiError(c, 403, 'not_permitted', NOT_ADMIN);
  });

  app.post('/api/policy/replay', async (c) => {
    const session = c.get('session');
    if (!(await isAdmin(session))) return apiError(c, 403, 'not_permitted', NOT_ADMIN);
    const body: unknown = await c.req.json().catch(() => undefined);
    const fields = typeof body === 'object' && body !== null ? (body as Record<string, unknown>) : {};
    const policy = fields.policy;
    // The policy as JSON text (what a file holds) or as the object itself.
    const text =
      typeof policy === 'string' ? policy : policy === undefined ? undefined : JSON.stringify(policy);
    if (text === undefined)
      return apiError(
        c,
        400,
        'bad_request',
        'Send {"policy": <the policy, or its JSON text>, "days"?: 30} as JSON.',
      );
    const outcome = await replayCandidate(deps, session.teamId, text, replayDays(fields.days));
    if (outcome.ok) return c.json(outcome.answer);
    return c.json(
      { error: { code: outcome.code, message: outcome.problems.join(' '), problems: outcome.problems } },
      400,
    );
  });

  app.get('/policy', async (c) => {
    const session = c.get('session');
    if (!(await isAdmin(session)))
      return c.html(page(await frame(session), html`<h1>Policy</h1><p>${NOT_ADMIN}</p>`), 403);
    return c.html(page(await frame(session), policyPage(inForce(session.teamId), session, undefined)));
  });

  app.post('/policy/replay', async (c) => {
    const session = c.get('session');
    if (!(await isAdmin(session)))
      return c.html(page(await frame(session), html`<h1>Policy</h1><p>${NOT_ADMIN}</p>`), 403);
    const text = (await formField(c, 'policy')) ?? '';
    const daysText = await formField(c, 'days');
    const outcome = await replayCandidate(deps, session.teamId, text, replayDays(daysText));
    return c.html(
      page(
        await frame(session),
        policyPage(inForce(session.teamId), session, { text, days: daysText, outcome }),
      ),
      outcome.ok ? 200 : 400,
    );
  });

  return app;
}
