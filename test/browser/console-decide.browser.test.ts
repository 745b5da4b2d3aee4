import type { Page } from 'playwright-core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REFUSALS } from '../../src/web/sign-in-routes.js';
import { approvalIdOf, cardTs, type Harness, startHarness } from '../e2e/harness.js';
import { useBrowser } from '../support/browser.js';
import { clickSignIn, signInInBrowser } from '../support/console-client.js';
import { reply } from '../support/fake-openai.js';
import { waitUntil } from '../support/wait.js';

const ADMIN = 'UADMIN';

/** Arguments a model could be talked into: markup, a script, a javascript: link and Slack's own markup. */
const HOSTILE_TEXT =
  '<script>alert(1)</script> <a href="javascript:alert(2)">open</a> <img src=x onerror=alert(3)> ' +
  '<!channel> <https://x|y>';

// A browser test walks through several pages and waits for the run behind them: more than a plain test's 20 s
// on a busy machine, while each browser action still gives up after 10 s.
describe('web console in a browser: deciding', { timeout: 40_000 }, () => {
  const browser = useBrowser();
  let h: Harness;
  let origin: string;
  const env = () => ({ DATABASE_PATH: h.dbPath, ADMIN_USER_IDS: ADMIN });
  beforeEach(async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: ADMIN } });
    origin = new URL(h.url).origin;
  });
  afterEach(async () => {
    // Not started when the browser's own setup failed first.
    await h?.close();
  });

  async function pendingRequest(text = 'hello') {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text } }]),
      reply.text('I added the note.'),
    );
    await h.mention(`please add a note saying ${text}`);
    const count = h.cards().length + 1;
    const card = (await h.waitForCards(count))[count - 1];
    if (!card) throw new Error('no card');
    return { card, id: approvalIdOf(card) };
  }

  it('an admin signs in with the one-time link, sees the request and approves it: the card is updated and the run answers', async () => {
    const { card, id } = await pendingRequest();
    const { page } = browser;
    await signInInBrowser(page, origin, env(), ADMIN);
    expect(new URL(page.url()).pathname).toBe('/console');
    const request = page.getByRole('region', { name: 'create_note' });
    expect(await request.getByLabel('Arguments', { exact: true }).textContent()).toContain('"text": "hello"');
    expect(await request.textContent()).toContain('U1');
    await page.emulateMedia({ colorScheme: 'dark' });
    await browser.screenshot('dark');
    await page.emulateMedia({ colorScheme: 'light' });

    await request.getByRole('button', { name: 'Approve', exact: true }).click();
    await page.waitForURL(`${origin}/console/approvals/${id}?outcome=approved`);
    expect(await page.getByRole('status').textContent()).toContain('Approved.');
    const update = await h.slack.waitForCall('chat.update', (c) => c.params.ts === cardTs(card));
    expect(JSON.stringify(update.params.blocks)).toContain(`Approved by <@${ADMIN}>`);
    await h.waitForText((t) => t === 'I added the note.');
    expect(browser.cspViolations).toEqual([]);
  });

  it('a reason typed in the reject form reaches the model, and the request page shows it', async () => {
    const { id } = await pendingRequest('secret plans');
    const { page } = browser;
    await signInInBrowser(page, origin, env(), ADMIN);
    const request = page.getByRole('region', { name: 'create_note' });
    await request.getByLabel('Reason').fill('not before the audit');
    await request.getByRole('button', { name: 'Reject' }).click();
    await page.waitForURL(`${origin}/console/approvals/${id}?outcome=rejected`);
    expect(await page.getByRole('status').textContent()).toContain('Rejected.');
    expect(await page.locator('.facts').textContent()).toContain('not before the audit');
    const toolOutput = await waitUntil(
      () => h.model.requests.at(1)?.messages.find((m) => m.role === 'tool')?.content,
      { timeoutMs: 10_000, message: 'expected the rejection to reach the model' },
    );
    expect(toolOutput).toContain('not before the audit');
  });

  it('the decide page works from the keyboard alone: Tab reaches Approve, Approve for this thread, the reason and Reject, focus shows, Enter approves', async () => {
    const { card, id } = await pendingRequest();
    const { page } = browser;
    await signInInBrowser(page, origin, env(), ADMIN);
    const stops: string[] = [];
    for (let press = 0; press < 20 && !stops.includes('button Reject'); press++) {
      await page.keyboard.press('Tab');
      const focused = await describeFocus(page);
      stops.push(focused.name);
      expect(focused.focusVisible, `focus on ${focused.name} is not visible`).toBe(true);
    }
    const at = (name: string) => stops.indexOf(name);
    expect(at('button Approve')).toBeGreaterThan(-1);
    expect(at('button Approve for this thread')).toBe(at('button Approve') + 1);
    expect(at('input Reason')).toBe(at('button Approve for this thread') + 1);
    expect(at('button Reject')).toBe(at('input Reason') + 1);

    for (let back = 0; back < 3; back++) await page.keyboard.press('Shift+Tab');
    expect((await describeFocus(page)).name).toBe('button Approve');
    await browser.screenshot('approve-focused');
    await Promise.all([
      page.waitForURL(`**/console/approvals/${id}?outcome=approved`),
      page.keyboard.press('Enter'),
    ]);
    await h.slack.waitForCall('chat.update', (c) => c.params.ts === cardTs(card));
  });

  it('tool arguments holding a script, a javascript: link and Slack markup are shown as text and do nothing', async () => {
    const { id } = await pendingRequest(HOSTILE_TEXT);
    const { page } = browser;
    await signInInBrowser(page, origin, env(), ADMIN);
    for (const path of ['/console', `/console/approvals/${id}`]) {
      await page.goto(`${origin}${path}`);
      const shown = await page.getByLabel('Arguments', { exact: true }).textContent();
      expect(shown).toContain('<script>alert(1)</script>');
      expect(shown).toContain('<a href=\\"javascript:alert(2)\\">open</a>');
      expect(shown).toContain('<!channel> <https://x|y>');
      await expectInert(page);
    }
    expect(browser.dialogs).toEqual([]);
    expect(browser.cspViolations).toEqual([]);
  });

  it('every console page answers with the strict Content-Security-Policy, which blocks an injected inline script', async () => {
    const { id } = await pendingRequest();
    const { page } = browser;
    await page.goto(`${origin}/console/login`);
    await signInInBrowser(page, origin, env(), ADMIN);
    await page.goto(`${origin}/console/approvals/${id}`);
    await page.goto(`${origin}/console/approvals/apr_000000000000000000000000`);

    const answers = browser.responses.filter((r) => r.url.startsWith(`${origin}/console`));
    const documents = answers.filter((r) => r.resourceType === 'document');
    // The sign-in page, the link page, the redirect after it, the decide page, a request, a refused request.
    expect(documents.map((r) => r.status)).toEqual([200, 200, 303, 200, 200, 403]);
    expect(answers.some((r) => r.resourceType === 'stylesheet')).toBe(true);
    for (const answer of answers) {
      const policy = answer.headers['content-security-policy'] ?? '';
      expect(policy, answer.url).toContain("default-src 'none'");
      expect(policy, answer.url).toContain("script-src 'self'");
      expect(policy, answer.url).not.toContain('unsafe-inline');
      expect(policy, answer.url).not.toContain('unsafe-eval');
    }
    expect(browser.cspViolations).toEqual([]);
    expect(browser.refused).toEqual([]);

    const ran = await page.locator('body').evaluate((body) => {
      const script = body.ownerDocument.createElement('script');
      script.textContent = 'document.body.dataset.injected = "ran"';
      body.append(script);
      return body.dataset.injected ?? 'blocked';
    });
    expect(ran).toBe('blocked');
    await waitUntil(() => browser.cspViolations.length > 0, {
      message: 'expected the browser to report the blocked inline script',
    });
  });

  it('the decide page fits a phone: nothing is wider than the screen', async () => {
    await pendingRequest('a note long enough to wrap on a narrow screen, as real requests are');
    const { page } = browser;
    await page.setViewportSize({ width: 360, height: 740 });
    await signInInBrowser(page, origin, env(), ADMIN);
    const overflow = await page.locator('html').evaluate((root) => root.scrollWidth - root.clientWidth);
    expect(overflow).toBe(0);
    await expect(page.getByRole('button', { name: 'Approve', exact: true }).isVisible()).resolves.toBe(true);
  });

  it('a one-time link signs in once: used again, it lands on the sign-in page with the refusal', async () => {
    const { page } = browser;
    const link = await signInInBrowser(page, origin, env(), ADMIN);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Decide');

    const second = await browser.newPage();
    await second.goto(link);
    await Promise.all([second.waitForURL((url) => url.href !== link), clickSignIn(second)]);
    expect(second.url()).toBe(`${origin}/console/login?refused=link`);
    expect(await second.getByRole('status').textContent()).toBe(REFUSALS.link);
    expect(await second.getByRole('heading', { level: 1 }).textContent()).toBe('Sign in');
    expect((await second.context().cookies()).map((c) => c.name)).not.toContain('console_session');
  });
});

/**
 * The focused element as "tag accessible-name", and whether the browser draws its focus ring. (The project's
 * TypeScript has no DOM types: what runs in the page reaches the window through the element.)
 */
async function describeFocus(page: Page): Promise<{ name: string; focusVisible: boolean }> {
  const focused = page.locator(':focus');
  if ((await focused.count()) === 0) return { name: 'none', focusVisible: false };
  return focused.evaluate((element) => {
    const label = element.labels?.[0] ?? element;
    const name = `${element.tagName.toLowerCase()} ${label.textContent?.trim() ?? ''}`;
    const style = element.ownerDocument.defaultView.getComputedStyle(element);
    const ring = style.outlineStyle !== 'none' && Number.parseFloat(style.outlineWidth) >= 2;
    return { name, focusVisible: element.matches(':focus-visible') && ring };
  });
}

/** Nothing in the page came from the arguments as markup: no script, image or link they could have made. */
async function expectInert(page: Page): Promise<void> {
  const hrefs = await Promise.all(
    (await page.locator('a').all()).map(async (link) => (await link.getAttribute('href')) ?? ''),
  );
  expect({
    scripts: await page.locator('script').count(),
    images: await page.locator('img').count(),
    javascriptLinks: hrefs.filter((href) => href.trim().toLowerCase().startsWith('javascript:')),
    slackLinks: hrefs.filter((href) => href.startsWith('https://x')),
  }).toEqual({ scripts: 0, images: 0, javascriptLinks: [], slackLinks: [] });
}
