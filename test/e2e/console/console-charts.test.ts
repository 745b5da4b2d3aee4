import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalTrends } from '../../../src/approvals/approval-trends.js';
import { auditEvent } from '../../../src/audit/audit-event.js';
import { runEvents, seedApprovals, seedAuditEvents } from '../../support/audit-seed.js';
import { type ConsoleClient, signInWithLink } from '../../support/console-client.js';
import { type Harness, startHarness } from '../harness.js';

const ADMIN = 'UADMIN';
const AUDITOR = 'UAUDIT';
const at = (iso: string) => Date.parse(iso);
const RANGE = 'since=2026-03-01&until=2026-03-03';
/** A time to decision as the figures give it: read from its wait bucket, within 5 % of the exact one. */
const within = (ms: number) =>
  expect.toSatisfy((read: number) => Math.abs(read - ms) <= ms * 0.05, `within 5 % of ${ms} ms`);

/** The figure of one chart on the page, its marks, and its table's rows (label, then each cell). */
function chart(page: string, id: string): { marks: number; rows: string[][]; svg: string } {
  const figure = new RegExp(`<figure class="chart" id="${id}">([\\s\\S]*?)</figure>`).exec(page)?.[1];
  if (!figure) throw new Error(`no chart ${id}`);
  const svg = /<svg role="img"[\s\S]*?<\/svg>/.exec(figure)?.[0] ?? '';
  const body = /<tbody>([\s\S]*?)<\/tbody>/.exec(figure)?.[1] ?? '';
  const rows = [...body.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((row) =>
    [...(row[1] ?? '').matchAll(/<t[hd][^>]*>([^<]*)<\/t[hd]>/g)].map((cell) => cell[1] ?? ''),
  );
  return { marks: (svg.match(/class="mark"/g) ?? []).length, rows, svg };
}

describe('web console: charts', () => {
  let h: Harness;
  let origin: string;
  let auditor: ConsoleClient;
  const env = () => ({ DATABASE_PATH: h.dbPath, ADMIN_USER_IDS: ADMIN });

  beforeAll(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN, AUDITOR_USER_IDS: AUDITOR } });
    origin = new URL(h.url).origin;
    const decided = (toolName: string, status: 'approved' | 'rejected', made: string, waitMs: number) => ({
      toolName,
      status,
      decidedBy: ADMIN,
      createdAt: at(made),
      decidedAt: at(made) + waitMs,
    });
    await seedApprovals(
      h.database,
      decided('create_note', 'approved', '2026-03-01T10:00:00Z', 60_000),
      decided('create_note', 'rejected', '2026-03-01T11:00:00Z', 120_000),
      decided('delete_note', 'approved', '2026-03-01T12:00:00Z', 600_000),
      { toolName: 'create_note', status: 'expired', createdAt: at('2026-03-02T09:00:00Z') },
      { toolName: 'post_message', createdAt: at('2026-03-02T10:00:00Z') },
      decided('create_note', 'approved', '2026-03-03T23:00:00Z', 300_000),
      // Outside the range, and another workspace's requests inside it.
      decided('create_note', 'approved', '2026-02-27T10:00:00Z', 1_000),
      { ...decided('post_message', 'rejected', '2026-03-01T10:00:00Z', 5_000), teamId: 'T2' },
      { ...decided('post_message', 'rejected', '2026-03-02T10:00:00Z', 5_000), teamId: 'T2' },
    );
    const deadline = (kind: 'approval.expired' | 'approval.escalated', iso: string, teamId = 'T1') =>
      auditEvent(kind, { at: at(iso), teamId, payload: { tool: 'create_note' } });
    await seedAuditEvents(h.database, [
      deadline('approval.expired', '2026-03-02T21:00:00Z'),
      deadline('approval.escalated', '2026-03-02T12:00:00Z'),
      deadline('approval.expired', '2026-03-02T21:00:00Z', 'T2'),
      ...runEvents('run_a', {
        user: 'U1',
        tools: ['create_note'],
        prompt: 100,
        completion: 50,
        at: at('2026-03-01T10:05:00Z'),
      }),
      ...runEvents('run_b', { user: 'U2', prompt: 30, completion: 10, at: at('2026-03-03T08:00:00Z') }),
      ...runEvents('run_c', {
        user: 'U1',
        tools: ['create_note', 'delete_note'],
        prompt: 200,
        completion: 0,
        at: at('2026-03-03T09:00:00Z'),
      }),
      ...runEvents('run_other', {
        user: 'UOTHERTEAM',
        teamId: 'T2',
        tools: ['post_message'],
        prompt: 1000,
        completion: 0,
        at: at('2026-03-01T10:00:00Z'),
      }),
    ]);
    auditor = await signInWithLink(origin, env(), AUDITOR);
  });
  afterAll(async () => {
    await h.close();
  });

  it('the stats API gives the figures per UTC day of the range, for the auditor’s workspace only', async () => {
    const answer = await auditor.get(`/console/api/stats?${RANGE}`);
    expect(answer.status).toBe(200);
    const stats = (await answer.json()) as ApprovalTrends;
    expect(stats.since).toBe('2026-03-01T00:00:00.000Z');
    expect(stats.until).toBe('2026-03-03T23:59:59.999Z');
    expect(stats.days).toEqual(['2026-03-01', '2026-03-02', '2026-03-03']);
    expect(stats.requestsPerDay).toEqual([
      { key: 'pending', perDay: [0, 1, 0], total: 1 },
      { key: 'approved', perDay: [2, 0, 1], total: 3 },
      { key: 'rejected', perDay: [1, 0, 0], total: 1 },
      { key: 'expired', perDay: [0, 1, 0], total: 1 },
    ]);
    expect(stats.decisionTime).toEqual([
      { tool: 'create_note', decided: 3, p50Ms: within(120_000), p90Ms: within(300_000) },
      { tool: 'delete_note', decided: 1, p50Ms: within(600_000), p90Ms: within(600_000) },
    ]);
    expect(stats.topTools).toEqual([
      { tool: 'create_note', requests: 4 },
      { tool: 'delete_note', requests: 1 },
      { tool: 'post_message', requests: 1 },
    ]);
    expect(stats.expiredPerDay).toEqual([0, 1, 0]);
    expect(stats.escalatedPerDay).toEqual([0, 1, 0]);
    expect(stats.tokens.byPerson).toEqual([
      { key: 'U1', perDay: [150, 0, 200], total: 350 },
      { key: 'U2', perDay: [0, 0, 40], total: 40 },
    ]);
    expect(stats.tokens.byTool).toEqual([
      { key: 'create_note', perDay: [150, 0, 200], total: 350 },
      { key: 'delete_note', perDay: [0, 0, 200], total: 200 },
      { key: '(no tool)', perDay: [0, 0, 40], total: 40 },
    ]);
  });

  it('the charts page draws each chart as SVG with one mark per data point, above the table it was drawn from', async () => {
    const answer = await auditor.get(`/console/charts?${RANGE}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await answer.text();
    expect(page).not.toMatch(/<script|style=/);

    const requests = chart(page, 'requests-per-day');
    expect(requests.svg).toContain(
      '<title id="requests-per-day-svg-title">Requests per day by outcome</title>',
    );
    // The non-zero (day, outcome) cells: approved on the 1st and 3rd, rejected on the 1st, pending and expired on the 2nd.
    expect(requests.marks).toBe(5);
    expect(requests.rows).toEqual([
      ['2026-03-01', '0', '2', '1', '0'],
      ['2026-03-02', '1', '0', '0', '1'],
      ['2026-03-03', '0', '1', '0', '0'],
    ]);
    const waits = chart(page, 'decision-time');
    expect(waits.marks).toBe(4);
    expect(waits.rows).toEqual([
      ['create_note', '2m', '5m'],
      ['delete_note', '10m', '10m'],
    ]);
    const tools = chart(page, 'top-tools');
    expect(tools.marks).toBe(3);
    expect(tools.rows).toEqual([
      ['create_note', '4'],
      ['delete_note', '1'],
      ['post_message', '1'],
    ]);
    const deadlines = chart(page, 'deadlines-per-day');
    expect(deadlines.marks).toBe(2);
    expect(deadlines.rows.map((r) => r.slice(1))).toEqual([
      ['0', '0'],
      ['1', '1'],
      ['0', '0'],
    ]);
    expect(chart(page, 'tokens-per-person').marks).toBe(2 * 3);
    expect(chart(page, 'tokens-per-person').rows).toEqual([
      ['2026-03-01', '150', '0'],
      ['2026-03-02', '0', '0'],
      ['2026-03-03', '200', '40'],
    ]);
    expect(chart(page, 'tokens-per-tool').marks).toBe(3 * 3);
    expect(page).not.toContain('UOTHERTEAM');
    expect(page).not.toContain('1,000');
  });

  it('an admin sees the charts too; anyone else gets 403 from the page and the API', async () => {
    const admin = await signInWithLink(origin, env(), ADMIN);
    expect((await admin.get(`/console/api/stats?${RANGE}`)).status).toBe(200);
    const stranger = await signInWithLink(origin, env(), 'USTRANGER');
    const api = await stranger.get(`/console/api/stats?${RANGE}`);
    expect(api.status).toBe(403);
    expect(((await api.json()) as { error: { code: string } }).error.code).toBe('not_permitted');
    const page = await stranger.get(`/console/charts?${RANGE}`);
    expect(page.status).toBe(403);
    expect(await page.text()).not.toContain('create_note');
  });

  it('a range that is not a date or span, runs backwards or is longer than 366 days is refused with 400', async () => {
    const refused = async (query: string) => {
      const answer = await auditor.get(`/console/api/stats?${query}`);
      return {
        status: answer.status,
        code: ((await answer.json()) as { error: { code: string } }).error.code,
      };
    };
    expect(await refused('since=yesterday')).toEqual({ status: 400, code: 'bad_range' });
    expect(await refused('since=2026-03-05&until=2026-03-01')).toEqual({ status: 400, code: 'bad_range' });
    expect(await refused('since=2024-01-01&until=2026-01-01')).toEqual({ status: 400, code: 'bad_range' });
    expect((await auditor.get('/console/charts?since=yesterday')).status).toBe(400);
  });
});
