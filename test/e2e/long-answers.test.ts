import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { type FakeSlack, type SlackCall, slackReply } from '../support/fake-slack.js';
import { type Harness, startHarness } from './harness.js';

/** About 26,000 characters in paragraphs of different lengths; every word is unique, so cuts are visible. */
const PARAGRAPHS = Array.from({ length: 60 }, (_, p) =>
  Array.from({ length: 40 + (p % 7) * 10 }, (_, w) => `p${p}w${w}`).join(' '),
);
const LONG = PARAGRAPHS.join('\n\n');

/** Text Slack counts against its limits for one call. */
function textOf(call: SlackCall): string {
  const blocks = Array.isArray(call.params.blocks) ? call.params.blocks : [];
  const blockText = blocks
    .map((b) => (b && typeof b === 'object' && 'text' in b ? String(b.text) : ''))
    .join('');
  return typeof call.params.markdown_text === 'string' ? call.params.markdown_text : blockText;
}

/** Makes the fake refuse what real Slack refuses: more than 12,000 characters of message text. */
function enforceLimits(slack: FakeSlack): void {
  const streamed = new Map<string, number>();
  for (const method of ['chat.postMessage', 'chat.startStream', 'chat.appendStream']) {
    slack.setResponse(method, (params, call) => {
      const key = String(params.ts ?? '');
      const total = (method === 'chat.appendStream' ? (streamed.get(key) ?? 0) : 0) + textOf(call).length;
      if (total > 12_000) return slackReply.error('msg_blocks_too_long');
      const answer = slack.defaultReply(method, params);
      const body = answer.body as { ts?: string };
      streamed.set(String(body.ts ?? key), total);
      return answer;
    });
  }
}

/** Each part must hold whole paragraphs only: no paragraph is cut, none is lost or repeated. */
function expectWholeParagraphs(parts: string[]): void {
  expect(parts.length).toBeGreaterThan(2);
  for (const part of parts) expect(part.length).toBeLessThanOrEqual(10_000);
  const rebuilt = parts.flatMap((part) => part.split('\n\n').map((p) => p.trim()));
  expect(rebuilt).toEqual(PARAGRAPHS);
}

describe('long answers', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('a posted answer is split across messages at paragraph boundaries, none refused by Slack', async () => {
    h = await startHarness({ env: { OPENAI_STREAM: 'false' } });
    enforceLimits(h.slack);
    h.model.enqueue(reply.text(LONG));
    const ts = await h.mention('write a lot');
    await h.waitForText((text) => text.endsWith(PARAGRAPHS.at(-1) ?? ''));
    const posts = h.slack.callsTo('chat.postMessage');
    expect(posts.every((post) => (post.reply as { ok: boolean }).ok)).toBe(true);
    expect(posts.every((post) => post.params.thread_ts === ts)).toBe(true);
    expectWholeParagraphs(h.texts());
  });

  it('a streamed answer continues in a new message before it outgrows the limit, cut between paragraphs', async () => {
    h = await startHarness();
    enforceLimits(h.slack);
    h.model.enqueue(reply.text(LONG));
    await h.mention('write a lot');
    await h.waitForText((text) => text.endsWith(PARAGRAPHS.at(-1) ?? ''));
    const refused = h.slack.calls.filter((call) => (call.reply as { ok?: boolean }).ok === false);
    expect(refused).toEqual([]);
    expect(h.messages().every((m) => m.via === 'stream' && m.finished)).toBe(true);
    expectWholeParagraphs(h.texts());
  });

  it('a part Slack refuses after others were shown is posted again with what follows it, nothing shown twice', async () => {
    h = await startHarness({ env: { OPENAI_STREAM: 'false' }, overrides: { deliveryRetryMs: 50 } });
    let parts = 0;
    h.slack.setResponse('chat.postMessage', (params) => {
      parts += 1;
      // The second part, the first time: Slack refuses it (the first part is in the thread already).
      if (parts === 2) return slackReply.error('internal_error');
      return h.slack.defaultReply('chat.postMessage', params);
    });
    h.model.enqueue(reply.text(LONG));
    await h.mention('write a lot');
    await h.waitForText((text) => text.endsWith(PARAGRAPHS.at(-1) ?? ''));
    expect(
      h.slack.callsTo('chat.postMessage').filter((c) => (c.reply as { ok: boolean }).ok === false),
    ).toHaveLength(1);
    expectWholeParagraphs(h.texts());
  });

  it.each([
    { slackKeptIt: true, posts: 3 },
    { slackKeptIt: false, posts: 4 },
  ])(
    'a part whose post went unanswered is looked for in the thread before it is posted again (Slack kept it: $slackKeptIt)',
    async ({ slackKeptIt, posts }) => {
      // The Web API client's own retry, as in production: it would post the part a second time.
      h = await startHarness({
        env: { OPENAI_STREAM: 'false' },
        overrides: { retryConfig: { retries: 1, minTimeout: 10, maxTimeout: 10 }, deliveryRetryMs: 60_000 },
      });
      let calls = 0;
      h.slack.setResponse('chat.postMessage', (params) => {
        calls += 1;
        if (calls !== 2) return h.slack.defaultReply('chat.postMessage', params);
        // The second part: Slack keeps it in the thread (or not), and either way answers a server error.
        if (slackKeptIt) h.slack.defaultReply('chat.postMessage', params);
        return slackReply.http(500);
      });
      h.model.enqueue(reply.text(LONG));
      await h.mention('write a lot');
      await h.waitForText((text) => text.endsWith(PARAGRAPHS.at(-1) ?? ''));
      expect(h.slack.callsTo('chat.postMessage')).toHaveLength(posts);
      const shown = h.slack.callsTo('chat.postMessage').filter((_c, i) => i !== 1 || slackKeptIt);
      expectWholeParagraphs(shown.map((c) => String(c.params.text)));
    },
  );
});
