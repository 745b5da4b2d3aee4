import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { waitUntil } from '../support/wait.js';
import { approvalIdOf, type Harness, startHarness } from './harness.js';
import { clickHomeBatch, slowVotes } from './home-clicks.js';

const ADMIN = 'UADMIN';

/**
 * A batch that is still deciding when Slack's 3 s are nearly up is answered then, and goes on: Slack does not
 * show the person a failure for a batch that is being decided. (Waits out real seconds: `npm test` only.)
 */
describe('a slow batch decision in App Home', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('is answered within Slack’s 3 s, decides every request after, and says so', async () => {
    const committed: number[] = [];
    const started = await startHarness({
      env: { ADMIN_USER_IDS: ADMIN },
      // A slow database: each vote commits 1.5 s after it is asked for.
      overrides: { stores: slowVotes(1_500, () => committed.push(Date.now())) },
    });
    h = started;
    for (const text of ['first', 'second']) {
      started.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text } }]));
      await started.mention(`note: ${text}`);
      await started.waitForCards(text === 'first' ? 1 : 2);
    }
    started.model.enqueue(reply.text('Done.'), reply.text('Done.'));
    const clicked = Date.now();
    const answered = await clickHomeBatch(started, 'batchApprove', started.cards().map(approvalIdOf), ADMIN);
    const answeredAfter = Date.now() - clicked;
    expect(answered.status).toBe(200);
    expect(answeredAfter).toBeLessThan(3_000);
    // The first vote committed before the answer, the second after it.
    expect(committed).toHaveLength(1);
    const summary = await waitUntil(
      () => started.slack.callsTo('chat.postMessage').find((c) => c.params.channel === ADMIN),
      { timeoutMs: 10_000, message: 'expected the summary by direct message' },
    );
    expect(String(summary.params.text)).toBe('Approved 2 requests.');
    expect(committed).toHaveLength(2);
  });
});
