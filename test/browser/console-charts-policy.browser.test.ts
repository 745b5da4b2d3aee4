import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auditEvent } from '../../src/audit/audit-event.js';
import { toolNames } from '../../src/tools/built-in-tools.js';
import { type Harness, startHarness } from '../e2e/harness.js';
import { runEvents, seedApprovals, seedAuditEvents } from '../support/audit-seed.js';
import { useBrowser } from '../support/browser.js';
import { signInInBrowser } from '../support/console-client.js';

const ADMIN = 'UADMIN';
const AUDITOR = 'UAUDIT';
const DAY = 86_400_000;
const at = (iso: string) => Date.parse(iso);
/** Only admins may decide create_note, and two of them: both recent create_note decisions would change. */
const CANDIDATE = JSON.stringify({ tools: { create_note: { approvers: ['admins'], quorum: 2 } } }, null, 2);

/** What each chart of the page drew: its marks, drawn at a size, and the rows of the table beneath it. */
interface DrawnChart {
  id: string;
  marks: number;
  /** Marks the browser drew with no area (a bar of height 0 or a dot nowhere). */
  flatMarks: number;
  rows: number;
}

describe('web console in a browser: charts and policy', { timeout: 40_000 }, () => {
  const browser = useBrowser();
  let h: Harness;
  let origin: string;
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
    const now = Date.now();
    await seedApprovals(
      h.database,
      // Three days of March for the charts.
      decided('create_note', 'approved', '2026-03-01T10:00:00Z', 60_000),
      decided('create_note', 'rejected', '2026-03-01T11:00:00Z', 120_000),
      decided('delete_note', 'approved', '2026-03-01T12:00:00Z', 600_000),
      { toolName: 'create_note', status: 'expired', createdAt: at('2026-03-02T09:00:00Z') },
      { toolName: 'post_message', createdAt: at('2026-03-02T10:00:00Z') },
      decided('create_note', 'approved', '2026-03-03T23:00:00Z', 300_000),
      // The last days, for the policy's replay (30 days by default).
      { toolName: 'create_note', status: 'approved', decidedBy: 'U2', createdAt: now - 3 * DAY },
      { toolName: 'create_note', createdAt: now - 2 * DAY },
      { toolName: 'delete_note', status: 'approved', decidedBy: ADMIN, createdAt: now - DAY },
    );
    await seedAuditEvents(h.database, [
      auditEvent('approval.expired', {
        at: at('2026-03-02T21:00:00Z'),
        teamId: 'T1',
        payload: { tool: 'create_note' },
      }),
      auditEvent('approval.escalated', {
        at: at('2026-03-02T12:00:00Z'),
        teamId: 'T1',
        payload: { tool: 'create_note' },
      }),
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
    ]);
  });
  afterAll(async () => {
    await h?.close();
  });

  async function showRange(page: Page, since: string, until: string): Promise<void> {
    await page.getByLabel('Since').fill(since);
    await page.getByLabel('Until').fill(until);
    await Promise.all([
      page.waitForURL(`${origin}/console/charts?since=${since}&until=${until}`),
      page.getByRole('button', { name: 'Show' }).click(),
    ]);
  }

  it('an auditor opens Charts and picks a range with the form: every chart is drawn with a mark per figure, its table beneath', async () => {
    const { page } = browser;
    await signInInBrowser(page, origin, env(), AUDITOR);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Charts' }).click();
    await page.waitForURL(`${origin}/console/charts`);
    await showRange(page, '2026-03-01', '2026-03-03');
    // Marks: non-zero stacked values; a bar per tool and percentile; a dot per person (or tool) and day.
    expect(await drawnCharts(page)).toEqual([
      chartOf('requests-per-day', 5, 3),
      chartOf('decision-time', 4, 2),
      chartOf('top-tools', 3, 3),
      chartOf('deadlines-per-day', 2, 3),
      chartOf('tokens-per-person', 2 * 3, 3),
      chartOf('tokens-per-tool', 3 * 3, 3),
    ]);
    await browser.screenshot('three-days');

    await showRange(page, '2026-03-01', '2026-03-01');
    expect(await page.getByLabel('Since').inputValue()).toBe('2026-03-01');
    expect(await drawnCharts(page)).toEqual([
      chartOf('requests-per-day', 2, 1),
      chartOf('decision-time', 4, 2),
      chartOf('top-tools', 2, 2),
      chartOf('deadlines-per-day', 0, 1),
      chartOf('tokens-per-person', 1, 1),
      chartOf('tokens-per-tool', 1, 1),
    ]);
    expect(browser.cspViolations).toEqual([]);
  });

  it('an admin sees a row per tool of the policy in force, pastes a candidate and sees the decisions it would change', async () => {
    const { page } = browser;
    await signInInBrowser(page, origin, env(), ADMIN);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'Policy' }).click();
    await page.waitForURL(`${origin}/console/policy`);
    const tools = await page.locator('table.policy tbody > tr > th').allTextContents();
    expect(tools).toEqual([...[...toolNames()].sort(), '(other tools)']);

    await page.getByLabel('Candidate policy (JSON)').fill(CANDIDATE);
    await expect(page.getByLabel('Days').inputValue()).resolves.toBe('30');
    await Promise.all([
      page.waitForURL(`${origin}/console/policy/replay`),
      page.getByRole('button', { name: 'Replay' }).click(),
    ]);
    expect(await page.getByRole('heading', { name: /^Replay of/ }).textContent()).toContain('3 request(s)');
    await page.getByRole('heading', { name: 'Decisions that would change (2)' }).waitFor();
    const changed = await page.locator('table.replay-changed tbody tr').allTextContents();
    expect(changed).toHaveLength(2);
    expect(changed.every((row) => row.includes('create_note') && row.includes('quorum 1 → 2'))).toBe(true);
    // The candidate stays in the field, to be changed and replayed again.
    expect(await page.getByLabel('Candidate policy (JSON)').inputValue()).toBe(CANDIDATE);
    expect(browser.cspViolations).toEqual([]);
  });

  it('an auditor has no Policy in the navigation and gets the 403 page at its address', async () => {
    const { page } = browser;
    await signInInBrowser(page, origin, env(), AUDITOR);
    const navigation = page.getByRole('navigation', { name: 'Console' });
    expect(await navigation.getByRole('link').allTextContents()).toEqual(['Decide', 'History', 'Charts']);
    const answer = await page.goto(`${origin}/console/policy`);
    expect(answer?.status()).toBe(403);
    expect(await page.locator('main').textContent()).toContain('The policy is for admins');
    expect(await page.locator('main').textContent()).not.toContain('create_note');
    expect(browser.cspViolations).toEqual([]);
  });

  it('on a phone in dark mode the policy and the charts fit the screen: wide tables and charts scroll inside their frame, chart labels stay legible', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 360, height: 740 });
    await page.emulateMedia({ colorScheme: 'dark' });
    await signInInBrowser(page, origin, env(), ADMIN);
    await page.goto(`${origin}/console/policy`);
    expect(await overflow(page)).toBe(0);
    const frame = page.getByRole('region', { name: 'Policy in force' });
    expect(await frame.evaluate((box) => box.scrollWidth > box.clientWidth)).toBe(true);
    await browser.screenshot('policy');
    await page.goto(`${origin}/console/charts?since=2026-03-01&until=2026-03-03`);
    expect(await overflow(page)).toBe(0);
    // A chart keeps a readable size and scrolls inside its frame: its labels are no smaller than 9 px.
    const sizes = await page.locator('figure.chart svg[role="img"]').evaluateAll((charts) =>
      charts.map((svg) => ({
        frameScrolls: (svg.parentElement?.scrollWidth ?? 0) > (svg.parentElement?.clientWidth ?? 0),
        smallestLabel: Math.min(
          ...[...svg.querySelectorAll('text')].map((t) => t.getBoundingClientRect().height),
        ),
      })),
    );
    expect(sizes).toHaveLength(6);
    for (const size of sizes) {
      expect(size.frameScrolls).toBe(true);
      expect(size.smallestLabel).toBeGreaterThanOrEqual(9);
    }
  });
});

/** A chart as it should be drawn: every mark with an area. */
function chartOf(id: string, marks: number, rows: number): DrawnChart {
  return { id, marks, flatMarks: 0, rows };
}

/** Each chart of the page as the browser drew it. */
async function drawnCharts(page: Page): Promise<DrawnChart[]> {
  return page.locator('figure.chart').evaluateAll((figures) =>
    figures.map((figure) => {
      const svg = figure.querySelector('svg[role="img"]');
      const marks = [...(svg?.querySelectorAll('.mark') ?? [])].map((mark) => mark.getBoundingClientRect());
      return {
        id: figure.id,
        marks: marks.length,
        flatMarks: marks.filter((box) => box.width <= 0 || box.height <= 0).length,
        rows: figure.querySelectorAll('table tbody tr').length,
      };
    }),
  );
}

/** How much wider than the screen the page is. */
function overflow(page: Page): Promise<number> {
  return page.locator('html').evaluate((root) => root.scrollWidth - root.clientWidth);
}
