import { afterEach, describe, expect, it } from 'vitest';
import { reply } from '../support/fake-openai.js';
import { slackReply } from '../support/fake-slack.js';
import { type Harness, startHarness } from './harness.js';

const PARENT = '1700000000.000100';

/** A thread that was going on before anyone mentioned the bot. */
function scriptThread(h: Harness): void {
  h.slack.setResponse('conversations.replies', (params) =>
    slackReply.ok({
      messages: [
        { type: 'message', ts: PARENT, user: 'U5', text: 'Our deploy failed at step 3' },
        { type: 'message', ts: '1700000000.000200', user: 'U6', text: 'I see a timeout in the logs' },
        {
          type: 'message',
          ts: '1700000000.000300',
          subtype: 'channel_join',
          user: 'U8',
          text: '<@U8> has joined',
        },
        {
          type: 'message',
          ts: '1700000000.000400',
          bot_id: 'B9',
          username: 'ci-bot',
          text: 'Build #42 failed',
        },
        // Slack filters by `latest`; the bot must not rely on it and never repeats the mention itself.
        { type: 'message', ts: String(params.latest), user: 'U1', text: '<@UBOT> what went wrong?' },
      ],
      has_more: false,
    }),
  );
}

function userContents(h: Harness, request: number): unknown[] {
  return (h.model.requests[request]?.messages ?? []).filter((m) => m.role === 'user').map((m) => m.content);
}

describe('thread context', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('gives the model the earlier messages of the thread with their authors, once', async () => {
    h = await startHarness();
    scriptThread(h);
    h.model.enqueue(reply.text('The deploy timed out.'), reply.text('Retry step 3.'));
    const ts = await h.mention('what went wrong?', { threadTs: PARENT });
    await h.waitForText((text) => text === 'The deploy timed out.');
    const replies = h.slack.callsTo('conversations.replies');
    expect(replies).toHaveLength(1);
    expect(replies[0]?.params).toMatchObject({ channel: 'C1', ts: PARENT, latest: ts });
    const [context, question] = userContents(h, 0);
    expect(question).toBe('what went wrong?');
    expect(String(context).split('\n').slice(1)).toEqual([
      '<@U5>: Our deploy failed at step 3',
      '<@U6>: I see a timeout in the logs',
      'ci-bot (bot): Build #42 failed',
    ]);

    await h.message('what now?', { threadTs: PARENT });
    await h.waitForText((text) => text === 'Retry step 3.');
    expect(h.slack.callsTo('conversations.replies')).toHaveLength(1);
    const later = userContents(h, 1);
    expect(later).toHaveLength(3);
    expect(later.filter((content) => String(content).includes('Our deploy failed'))).toHaveLength(1);
    expect(later.slice(1)).toEqual(['what went wrong?', 'what now?']);
  });

  it('keeps the thread start and the latest messages when there are more than THREAD_CONTEXT_MESSAGES', async () => {
    h = await startHarness({ env: { THREAD_CONTEXT_MESSAGES: '2' } });
    scriptThread(h);
    h.model.enqueue(reply.text('ok'));
    await h.mention('summarise', { threadTs: PARENT });
    await h.waitForText((text) => text === 'ok');
    const [context] = userContents(h, 0);
    expect(String(context).split('\n').slice(1)).toEqual([
      '<@U5>: Our deploy failed at step 3',
      'ci-bot (bot): Build #42 failed',
    ]);
  });

  it('reads nothing for a mention that starts a thread, and answers when the thread cannot be read', async () => {
    h = await startHarness();
    h.model.enqueue(reply.text('Hi.'), reply.text('Still fine.'));
    await h.mention('hello');
    await h.waitForText((text) => text === 'Hi.');
    expect(h.slack.callsTo('conversations.replies')).toHaveLength(0);

    h.slack.setResponse('conversations.replies', () => slackReply.error('missing_scope'));
    await h.mention('and here?', { threadTs: PARENT });
    await h.waitForText((text) => text === 'Still fine.');
    expect(userContents(h, 1)).toEqual(['and here?']);
  });
});
