import { afterEach, describe, expect, it } from 'vitest';
import { isSummaryRequest, scriptedModel } from '../integration/context-rig.js';
import { type Harness, startHarness } from './harness.js';

/** A model server with a 6,000-token window, as the one where the eighth turn of a thread used to fail. */
const WINDOW = 6000;

describe('a long Slack thread against a model with a small context', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('every turn is answered, older turns are summarised, and the first fact is still known', async () => {
    h = await startHarness({ env: { MODEL_CONTEXT_TOKENS: String(WINDOW) } });
    h.model.setContextLimit(WINDOW);
    h.model.setHandler(scriptedModel);
    const ts = await h.mention('FACT: the project codename is BLUEBIRD. Please remember it for later.');
    await h.waitForText((text) => text.startsWith('Noted (FACT'));
    const filler =
      'with the usual figures on tickets opened and closed, the backlog, the on-call rota and the open incidents. '.repeat(
        4,
      );
    for (let n = 2; n <= 40; n += 1) {
      await h.message(`Message ${String(n).padStart(2, '0')}: the weekly report, ${filler}`, {
        threadTs: ts,
      });
      await h.waitForText((text) => text.startsWith(`Noted (Message ${String(n).padStart(2, '0')}`));
    }
    await h.message('What is the codename?', { threadTs: ts });
    await h.waitForText((text) => text === 'The codename is BLUEBIRD.');
    const posted = h.slack.callsTo('chat.postMessage').map((call) => String(call.params.text ?? ''));
    expect(posted.filter((text) => /^(The model service|This conversation)/.test(text))).toEqual([]);
    expect(h.model.requests.filter(isSummaryRequest).length).toBeGreaterThan(0);
    expect(h.model.refused).toEqual([]);
  }, 60_000);
});
