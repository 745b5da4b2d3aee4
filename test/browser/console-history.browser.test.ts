import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rows } from '../e2e/db-rows.js';
import { approvalIdOf, type Harness, startHarness } from '../e2e/harness.js';
import { seedApprovals } from '../support/audit-seed.js';
import { useBrowser } from '../support/browser.js';
import { signInInBrowser } from '../support/console-client.js';
import { reply } from '../support/fake-openai.js';

const ADMIN = 'UADMIN';
const AUDITOR = 'UAUDIT';
const T0 = Date.parse('2026-05-01T10:00:00Z');
/** Rejected send_email requests: two events each, more than the history's page of 50. */
const REJECTED_EMAILS = 30;

/** One row of the history's table, as its cells read. */
interface HistoryRow {
  time: string;
  event: string;
  actor: string;
  tool: string;
  outcome: string;
  /** The row's request link, which tells the request apart. */
  request: string;
}

describe('web console in a browser: history and a run’s timeline', { timeout: 40_000 }, () => {
  const browser = useBrowser();
  let h: Harness;
  let origin: string;
  let realRun: { runId: string; approvalId: string };
  const env = () => ({ DATABASE_PATH: h.dbPath, ADMIN_USER_IDS: ADMIN });

  beforeAll(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN, AUDITOR_USER_IDS: AUDITOR } });
    origin = new URL(h.url).origin;
    // A real run through the model: request, card, decision in Slack, tool output, answer.
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'quarterly plan' } }]),
      reply.text('I added the note.'),
    );
    await h.mention('please add a note saying quarterly plan');
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    await h.click(card, 'approve', ADMIN);
    await h.waitForText((t) => t === 'I added the note.');
    const approvalId = approvalIdOf(card);
    // Seeded requests, older than the run: many rejected emails, and create_note requests the filter leaves out.
    await seedApprovals(
      h.database,
      ...Array.from({ length: REJECTED_EMAILS }, (_, i) => ({
        toolName: 'send_email',
        status: 'rejected' as const,
        decidedBy: ADMIN,
        createdAt: T0 + i * 60_000,
        arguments: { to: `person${i}@example.com`, subject: 'Invoice' },
      })),
      { toolName: 'send_email', status: 'approved', decidedBy: ADMIN, createdAt: T0 - 60_000 },
      { toolName: 'create_note', status: 'rejected', decidedBy: ADMIN, createdAt: T0 - 120_000 },
    );
    const [stored] = await rows(h.dbPath, 'select run_id from approvals where id = ?', approvalId);
    realRun = { runId: String(stored?.run_id), approvalId };
  });
  afterAll(async () => {
    await h?.close();
  });

  it('an auditor filters the history by tool and outcome with the keyboard alone, and pages with Older without seeing a row twice', async () => {
    const { page } = browser;
    await signInInBrowser(page, origin, env(), AUDITOR);
    await page.getByRole('navigation', { name: 'Console' }).getByRole('link', { name: 'History' }).click();
    await page.waitForURL(`${origin}/console/history`);
    await expect(page.getByRole('link', { name: 'Policy' }).count()).resolves.toBe(0);

    // From the top of the page: Tab to the Tool field, type, Tab to Outcome, pick "rejected", Enter in a field.
    const stops = await tabUntil(page, 'input Tool');
    expect(stops).toContain('input From');
    await page.keyboard.type('send_email');
    await page.keyboard.press('Tab');
    expect((await describeFocus(page)).name).toBe('input Actor or requester');
    await page.keyboard.press('Tab');
    expect((await describeFocus(page)).name).toBe('select Outcome');
    await page.keyboard.press('r');
    await page.keyboard.press('Tab');
    expect((await describeFocus(page)).name).toBe('input Channel');
    await browser.screenshot('filters-typed');
    await Promise.all([page.waitForURL(/outcome=rejected/), page.keyboard.press('Enter')]);
    const asked = new URL(page.url()).searchParams;
    expect(asked.get('tool')).toBe('send_email');
    expect(asked.get('outcome')).toBe('rejected');
    expect(await page.getByLabel('Tool').inputValue()).toBe('send_email');

    const seen: HistoryRow[] = [];
    for (let pages = 1; ; pages += 1) {
      const rows = await historyRows(page);
      expect(rows.length).toBeGreaterThan(0);
      seen.push(...rows);
      const older = page.getByRole('link', { name: 'Older →' });
      if ((await older.count()) === 0) break;
      expect(pages).toBeLessThan(5);
      await Promise.all([page.waitForURL(/cursor=/), older.click()]);
      expect(new URL(page.url()).searchParams.get('tool')).toBe('send_email');
    }
    expect(seen).toHaveLength(2 * REJECTED_EMAILS);
    expect(new Set(seen.map((r) => `${r.event} ${r.request}`)).size).toBe(seen.length);
    expect(new Set(seen.map((r) => `${r.tool} ${r.outcome}`))).toEqual(new Set(['send_email rejected']));
    expect(browser.cspViolations).toEqual([]);
  });

  it('the chain badge is checked on request and says verified; the export links download CSV and JSONL of the filtered view', async () => {
    const { page } = browser;
    await signInInBrowser(page, origin, env(), AUDITOR);
    await page.goto(`${origin}/console/history?tool=create_note`);
    await Promise.all([
      page.waitForURL(/verify=now/),
      page.getByRole('button', { name: 'Check now' }).click(),
    ]);
    expect(await page.getByRole('status').textContent()).toContain('Chain verified');
    expect(new URL(page.url()).searchParams.get('tool')).toBe('create_note');

    for (const [format, type, first] of [
      ['CSV', 'text/csv; charset=utf-8', /^seq,/],
      ['JSONL', 'application/x-ndjson; charset=utf-8', /^\{"seq":\d+,/],
    ] as const) {
      const link = page.getByRole('link', { name: `Export ${format}` });
      const answer = await page.context().request.get(`${origin}${await link.getAttribute('href')}`);
      expect(answer.status()).toBe(200);
      expect(answer.headers()['content-type']).toBe(type);
      const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
      expect(download.suggestedFilename()).toMatch(
        new RegExp(`^audit-\\d{4}-\\d{2}-\\d{2}\\.${format.toLowerCase()}$`),
      );
      const lines = readFileSync(await download.path(), 'utf8')
        .trim()
        .split('\n');
      expect(lines[0]).toMatch(first);
      // The filter holds: create_note's events only (the real run's request and decision, the seeded rejection).
      expect(lines.slice(format === 'CSV' ? 1 : 0).every((line) => line.includes('create_note'))).toBe(true);
      expect(lines.join('\n')).not.toContain('send_email');
    }
    expect(browser.cspViolations).toEqual([]);
  });

  it('a row’s run link opens the run’s timeline, its events in order from the request to the answer', async () => {
    const { page } = browser;
    await signInInBrowser(page, origin, env(), AUDITOR);
    await page.goto(`${origin}/console/history?tool=create_note&outcome=executed`);
    const rows = await historyRows(page);
    // The real run's events that name the tool, newest first.
    expect(rows.map((r) => r.event)).toEqual([
      'tool.finished',
      'tool.started',
      'run.resumed',
      'approval.approved',
      'approval.card_posted',
      'approval.requested',
    ]);
    await Promise.all([
      page.waitForURL(`${origin}/console/runs/${realRun.runId}`),
      page
        .getByRole('row')
        .filter({ hasText: 'approval.requested' })
        .getByRole('link', { name: 'run' })
        .click(),
    ]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe(`Run ${realRun.runId}`);
    const steps = await page.locator('ol.timeline > li > strong').allTextContents();
    expect(steps[0]).toBe('Request');
    expect(steps.at(-1)).toBe('Answer');
    const order = ['Request', 'Approval requested', 'Decision', 'Tool output', 'Answer'].map((s) =>
      steps.indexOf(s),
    );
    expect(order.every((at) => at >= 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    const times = await page
      .locator('ol.timeline time')
      .evaluateAll((all) => all.map((t) => t.getAttribute('datetime') ?? ''));
    expect([...times].sort()).toEqual(times);
    expect(await page.getByRole('link', { name: 'create_note' }).getAttribute('href')).toBe(
      `/console/approvals/${realRun.approvalId}`,
    );
    // An auditor reads the request too, with no decision to make.
    await Promise.all([
      page.waitForURL(`${origin}/console/approvals/${realRun.approvalId}`),
      page.getByRole('link', { name: 'create_note' }).click(),
    ]);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('create_note');
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(browser.cspViolations).toEqual([]);
  });

  it('on a phone the history and a run’s timeline fit the screen: the table scrolls inside its frame, not the page', async () => {
    const { page } = browser;
    await page.setViewportSize({ width: 360, height: 740 });
    await signInInBrowser(page, origin, env(), AUDITOR);
    for (const path of ['/console/history?tool=send_email', `/console/runs/${realRun.runId}`]) {
      await page.goto(`${origin}${path}`);
      const overflow = await page.locator('html').evaluate((root) => root.scrollWidth - root.clientWidth);
      expect(overflow, path).toBe(0);
    }
    await page.goto(`${origin}/console/history?tool=send_email`);
    const frame = page.getByRole('region', { name: 'Events' });
    expect(await frame.evaluate((box) => box.scrollWidth > box.clientWidth)).toBe(true);
    // The screenshot taken after the test shows the page in dark mode.
    await page.emulateMedia({ colorScheme: 'dark' });
  });
});

/** The cells of every row of the history's table. */
async function historyRows(page: Page): Promise<HistoryRow[]> {
  return page.locator('table.events tbody tr').evaluateAll((rows) =>
    rows.map((row) => {
      const cells = [...row.querySelectorAll('td')].map((cell) => cell.textContent?.trim() ?? '');
      const request = row.querySelector('a[href^="/console/approvals/"]')?.getAttribute('href') ?? '';
      const [time = '', event = '', actor = '', tool = '', outcome = ''] = cells;
      return { time, event, actor, tool, outcome, request };
    }),
  );
}

/** Presses Tab until `name` has the focus, each stop showing its focus ring; the stops on the way. */
async function tabUntil(page: Page, name: string): Promise<string[]> {
  const stops: string[] = [];
  for (let press = 0; press < 25 && stops.at(-1) !== name; press++) {
    await page.keyboard.press('Tab');
    const focused = await describeFocus(page);
    expect(focused.focusVisible, `focus on ${focused.name} is not visible`).toBe(true);
    stops.push(focused.name);
  }
  expect(stops.at(-1)).toBe(name);
  return stops;
}

/** The focused element as "tag label", and whether its focus ring shows (the page's code has no DOM types). */
async function describeFocus(page: Page): Promise<{ name: string; focusVisible: boolean }> {
  const focused = page.locator(':focus');
  if ((await focused.count()) === 0) return { name: 'none', focusVisible: false };
  return focused.evaluate((element) => {
    const label = element.labels?.[0];
    const own = label ? (label.firstChild?.textContent ?? '') : (element.textContent ?? '');
    const style = element.ownerDocument.defaultView.getComputedStyle(element);
    const ring = style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) >= 2;
    return {
      name: `${element.tagName.toLowerCase()} ${own.trim()}`,
      focusVisible: element.matches(':focus-visible') && ring,
    };
  });
}
