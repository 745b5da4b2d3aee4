import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { type Harness, startHarness } from './harness.js';

const MODEL_TEXT = [
  '## Summary',
  '**Deploy** failed; _see_ `step 3`. Ask <@U0ALICE> in <#C0DEPLOY>.',
  '- <!channel> <!here|here> @here',
  '- [the logs](https://evil.example/steal) and <https://evil.example|Google>',
].join('\n');

function expectSafe(text: string): void {
  expect(text).toContain('## Summary');
  expect(text).toContain('**Deploy** failed; _see_ `step 3`.');
  expect(text).toContain('<@U0ALICE>');
  expect(text).toContain('<#C0DEPLOY>');
  expect(text).not.toMatch(/<!/);
  expect(text).not.toContain('@here');
  expect(text).toContain('the logs (https://evil.example/steal)');
  expect(text).not.toContain('](');
  expect(text).not.toContain('<https://');
}

describe('formatting of answers', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('a streamed answer keeps Markdown and mentions; no broadcast, no hidden link target', async () => {
    h = await startHarness();
    h.model.enqueue(reply.text(MODEL_TEXT));
    await h.mention('what happened?');
    // It has links: streams take no unfurl flags, so it is posted as a message with previews off instead.
    const post = await h.slack.waitForCall('chat.postMessage');
    expect(post.params).toMatchObject({ unfurl_links: 'false', unfurl_media: 'false' });
    const blocks = post.params.blocks as { type: string; text: string }[];
    expectSafe(blocks[0]?.text ?? '');
    expect(h.slack.callsTo('chat.startStream')).toHaveLength(0);
  });

  it('a posted answer is a markdown block with the same protections', async () => {
    h = await startHarness({ env: { OPENAI_STREAM: 'false' } });
    h.model.enqueue(reply.text(MODEL_TEXT));
    await h.mention('what happened?');
    const post = await h.slack.waitForCall('chat.postMessage');
    const blocks = post.params.blocks as { type: string; text: string }[];
    expect(blocks.map((b) => b.type)).toEqual(['markdown']);
    expectSafe(blocks[0]?.text ?? '');
    expectSafe(String(post.params.text));
  });
});
