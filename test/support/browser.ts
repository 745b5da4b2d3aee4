import { existsSync, mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';

/** Where Debian's `chromium` package puts the browser; `CHROMIUM_PATH` names another one. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Screenshots land in `test-output/screenshots/<test file>/<test name>.png` (the folder is ignored by git). */
export const SCREENSHOTS_DIR = fileURLToPath(new URL('../../test-output/screenshots/', import.meta.url));

/**
 * Headless, and nothing leaves the machine: no sandbox (it refuses to start as root), no background
 * networking, component updates, sync or QUIC (Chromium would try to reach Google's hosts at every start).
 */
const LAUNCH_ARGS = [
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--disable-default-apps',
  '--disable-extensions',
];

/** The hosts a test's pages may reach: the bot and the fakes listen on 127.0.0.1. */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

/** Each action (click, fill, wait for a selector) gives up well before the test's own timeout. */
const ACTION_TIMEOUT_MS = 10_000;

/** An answer a page of the test received: a document, a stylesheet, a redirect. */
export interface SeenResponse {
  url: string;
  status: number;
  /** What kind of request the browser made: `document`, `stylesheet`, `script`, `fetch`, … */
  resourceType: string;
  headers: Record<string, string>;
}

/** What a browser test file gets: the current test's page and what its pages saw. */
export interface BrowserFixture {
  /** The current test's page, in a fresh context (no cookie of an earlier test). */
  readonly page: Page;
  /** Another page in its own context (another person, or the same person in a second browser). */
  newPage(): Promise<Page>;
  /** Saves the current test's page now, as `<test name>-<label>.png` (a state the final screenshot will not show). */
  screenshot(label: string): Promise<void>;
  /** Every answer the test's pages received, in order. */
  readonly responses: readonly SeenResponse[];
  /** The text of every dialog (`alert`, `confirm`, `prompt`) a page opened; each is dismissed. */
  readonly dialogs: readonly string[];
  /** Console messages of the test's pages that report a Content-Security-Policy violation. */
  readonly cspViolations: readonly string[];
  /**
   * Requests the test's pages made to anywhere but this machine, each refused. A test that needs an outside
   * page (Slack's authorize URL) answers it with its own `page.route`, which goes before this one.
   */
  readonly refused: readonly string[];
}

/**
 * Registers the hooks of a browser test file: Debian's Chromium is launched once for the file, each test gets
 * a fresh context and page, each page of a test is saved as a screenshot after it (passed or failed), and
 * everything is closed after the file. Without Chromium every test of the file fails with a sentence saying
 * how to install it (a browser test is never skipped).
 *
 * @example
 * const browser = useBrowser();
 * it('signs in', async () => {
 *   await browser.page.goto(linkUrl);
 *   await browser.page.getByRole('button', { name: 'Sign in' }).click();
 * });
 */
export function useBrowser(): BrowserFixture {
  let browser: Browser | undefined;
  let contexts: BrowserContext[] = [];
  let pages: Page[] = [];
  let responses: SeenResponse[] = [];
  let dialogs: string[] = [];
  let cspViolations: string[] = [];
  let refused: string[] = [];

  const newPage = async (): Promise<Page> => {
    if (!browser) throw new Error('the browser did not start');
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    context.setDefaultTimeout(ACTION_TIMEOUT_MS);
    contexts.push(context);
    await context.route(
      (url) => !LOOPBACK_HOSTS.has(url.hostname),
      (route) => {
        refused.push(route.request().url());
        return route.abort('blockedbyclient');
      },
    );
    const page = await context.newPage();
    watch(page, { responses, dialogs, cspViolations });
    pages.push(page);
    return page;
  };

  // A launch failure fails each test (in beforeEach), where a failing beforeAll would only mark them skipped.
  let launchFailure: unknown;
  beforeAll(async () => {
    browser = await launchChromium().catch((error: unknown) => {
      launchFailure = error;
      return undefined;
    });
  });
  beforeEach(async () => {
    if (launchFailure) throw launchFailure;
    responses = [];
    dialogs = [];
    cspViolations = [];
    refused = [];
    pages = [];
    contexts = [];
    await newPage();
  });
  afterEach(async () => {
    try {
      for (const [index, page] of pages.entries()) {
        if (page.isClosed()) continue;
        await save(page, screenshotPath(index === 0 ? '' : `-${index + 1}`));
      }
    } finally {
      // Closed even when a screenshot failed (a crashed page), so the next test starts clean.
      for (const each of contexts) await each.close();
    }
  });
  afterAll(async () => {
    await browser?.close();
  });

  return {
    screenshot: async (label) => {
      const first = pages[0];
      if (first) await save(first, screenshotPath(`-${fileSafe(label)}`));
    },
    get page() {
      const first = pages[0];
      if (!first) throw new Error('no page: useBrowser() pages exist only inside a test');
      return first;
    },
    newPage,
    get responses() {
      return responses;
    },
    get dialogs() {
      return dialogs;
    },
    get cspViolations() {
      return cspViolations;
    },
    get refused() {
      return refused;
    },
  };
}

/** `test-output/screenshots/<test file>/<test name><suffix>.png` for the test running now. */
function screenshotPath(suffix: string): string {
  const { testPath, currentTestName } = expect.getState();
  const file = basename(testPath ?? 'unknown').replace(/\.test\.ts$/, '');
  // The test's own name, without the names of the describe blocks around it.
  const name = fileSafe(currentTestName?.split(' > ').at(-1) ?? 'test');
  return join(SCREENSHOTS_DIR, file, `${name}${suffix}.png`);
}

async function save(page: Page, path: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  await page.screenshot({ path, fullPage: true });
}

/** Launches Chromium with the flags that work on a closed machine, or fails saying how to install it. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: the browser tests need Debian's chromium ` +
        '(apt-get install -y --no-install-recommends chromium, which .ci/run does) or CHROMIUM_PATH set to ' +
        'another Chromium.',
    );
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    chromiumSandbox: false,
    args: LAUNCH_ARGS,
  });
}

function watch(
  page: Page,
  seen: { responses: SeenResponse[]; dialogs: string[]; cspViolations: string[] },
): void {
  page.on('response', (response) => {
    seen.responses.push({
      url: response.url(),
      status: response.status(),
      resourceType: response.request().resourceType(),
      headers: response.headers(),
    });
  });
  page.on('dialog', (dialog) => {
    seen.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss();
  });
  page.on('console', (message) => {
    if (message.text().includes('Content Security Policy')) seen.cspViolations.push(message.text());
  });
}

/** A test's name as a file name: letters, digits and dashes. */
function fileSafe(name: string): string {
  const safe = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .slice(0, 100)
    .replace(/^-+|-+$/g, '');
  return safe || 'test';
}
