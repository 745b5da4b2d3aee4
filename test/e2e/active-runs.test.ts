import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { type Harness, startHarness } from './harness.js';

describe('runs driven at once (MAX_ACTIVE_RUNS)', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.close();
    h = undefined;
  });

  it('a run waits for a free slot, then is driven and answered; nothing is lost', async () => {
    h = await startHarness({ env: { MAX_ACTIVE_RUNS: '1' } });
    const harness = h;
    // What the thread had been told when each model request arrived.
    const seenAtRequest: string[][] = [];
    harness.model.setHandler((request) => {
      seenAtRequest.push(harness.texts());
      const asked = JSON.stringify(request.messages.at(-1)?.content);
      return asked.includes('first')
        ? reply.delayed(300, reply.text('First answer.'))
        : reply.text('Second answer.');
    });
    await harness.mention('first question');
    await harness.mention('second question');
    await harness.waitForText((text) => text === 'Second answer.');
    expect(harness.texts()).toEqual(expect.arrayContaining(['First answer.', 'Second answer.']));
    // The second run was driven only once the first had answered.
    expect(seenAtRequest).toHaveLength(2);
    expect(seenAtRequest[1]).toContain('First answer.');
  });
});
