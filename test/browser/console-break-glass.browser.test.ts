import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { approvalIdOf, cardTs, type Harness } from '../e2e/harness.js';
import { startPolicyHarness } from '../e2e/policy-support.js';
import { useBrowser } from '../support/browser.js';
import { signInInBrowser } from '../support/console-client.js';
import { reply } from '../support/fake-openai.js';

const ADMIN = 'UADMIN';

/** An admin whom the rule refuses approves their own request from the request's page, saying why. */
describe('web console in a browser: break glass', { timeout: 40_000 }, () => {
  const browser = useBrowser();
  let h: Harness;
  beforeEach(async () => {
    h = await startPolicyHarness(
      { tools: { create_note: { approvers: ['conversation', 'admins'], allowSelfApproval: false } } },
      { env: { ADMIN_USER_IDS: `${ADMIN},UADMIN2` } },
    );
  });
  afterEach(async () => {
    await h?.close();
  });

  it('the request page offers Break glass instead of Approve; the typed justification approves it', async () => {
    h.model.enqueue(
      reply.toolCalls([{ name: 'create_note', arguments: { text: 'hotfix' } }]),
      reply.text('Hotfix noted.'),
    );
    await h.mention('note the hotfix', { user: ADMIN });
    const [card] = await h.waitForCards(1);
    if (!card) throw new Error('no card');
    const id = approvalIdOf(card);
    const origin = new URL(h.url).origin;
    const { page } = browser;
    await signInInBrowser(page, origin, { DATABASE_PATH: h.dbPath, ADMIN_USER_IDS: ADMIN }, ADMIN);
    await page.goto(`${origin}/console/approvals/${id}`);
    expect(await page.getByRole('button', { name: 'Approve', exact: true }).count()).toBe(0);
    const form = page.getByRole('region', { name: 'Break glass' });
    await form.getByLabel('Justification (10 to 500 characters)').fill('Production is down; I am on call.');
    await browser.screenshot('justified');
    await form.getByRole('button', { name: 'Break glass and approve' }).click();
    await page.waitForURL(`${origin}/console/approvals/${id}?outcome=*`);
    await h.slack.waitForCall('chat.update', (c) => c.params.ts === cardTs(card));
    await h.waitForText((t) => t === 'Hotfix noted.');
    expect(browser.cspViolations).toEqual([]);
  });
});
