import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_SUGGESTED_PROMPTS } from '../../src/config-suggested-prompts.js';
import { reply } from '../support/fake-openai.js';
import { slackReply } from '../support/fake-slack.js';
import { waitUntil } from '../support/wait.js';
import { type Harness, startHarness } from './harness.js';

const DM = 'D0000000001';

function opened(user: string, tab: 'messages' | 'home') {
  return { type: 'app_home_opened', user, channel: DM, tab, event_ts: '1700000000.000001' };
}

describe('the Messages tab', () => {
  let h: Harness;
  afterEach(async () => {
    await h.close();
  });

  it('greets each person once and shows four suggested prompts without a thread', async () => {
    h = await startHarness();
    await h.sendEvent(opened('U0ALICE', 'messages'));
    const greeting = await h.slack.waitForCall('chat.postMessage');
    expect(greeting.params.channel).toBe(DM);
    expect(greeting.params.thread_ts).toBeUndefined();
    expect(String(greeting.params.text)).toMatch(/^Hi <@U0ALICE>!/);
    expect(String(greeting.params.text)).toContain('approves');
    const prompts = await h.slack.waitForCall('assistant.threads.setSuggestedPrompts');
    expect(prompts.params.channel_id).toBe(DM);
    expect(prompts.params.thread_ts).toBeUndefined();
    expect(prompts.params.prompts).toEqual(DEFAULT_SUGGESTED_PROMPTS);
    expect(DEFAULT_SUGGESTED_PROMPTS).toHaveLength(4);

    await h.sendEvent(opened('U0ALICE', 'messages'));
    await h.slack.waitForCall(
      'assistant.threads.setSuggestedPrompts',
      () => h.slack.callsTo('assistant.threads.setSuggestedPrompts').length === 2,
    );
    await h.sendEvent(opened('U0BOB', 'messages'));
    await h.slack.waitForCall('chat.postMessage', (call) => String(call.params.text).includes('<@U0BOB>'));
    await h.bot.conversations.idle();
    expect(
      h.slack.callsTo('chat.postMessage').map((call) => String(call.params.text).split(' ', 2).join(' ')),
    ).toEqual(['Hi <@U0ALICE>!', 'Hi <@U0BOB>!']);
  });

  it('leaves the Home tab alone, and uses the prompts from SUGGESTED_PROMPTS', async () => {
    const custom = [{ title: 'Deploys', message: 'How did the last deploy go?' }];
    h = await startHarness({ env: { SUGGESTED_PROMPTS: JSON.stringify(custom) } });
    await h.sendEvent(opened('U0ALICE', 'home'));
    await h.sendEvent(opened('U0ALICE', 'messages'));
    const prompts = await h.slack.waitForCall('assistant.threads.setSuggestedPrompts');
    expect(prompts.params.prompts).toEqual(custom);
    await h.slack.waitForCall('chat.postMessage');
    expect(h.slack.callsTo('assistant.threads.setSuggestedPrompts')).toHaveLength(1);
    expect(h.slack.callsTo('chat.postMessage')).toHaveLength(1);
  });

  it('greets again next time when the greeting could not be posted', async () => {
    h = await startHarness();
    h.slack.setResponse('chat.postMessage', () => slackReply.error('channel_not_found'));
    await h.sendEvent(opened('U0ALICE', 'messages'));
    await h.slack.waitForCall('chat.postMessage');
    h.slack.clearResponse('chat.postMessage');
    await h.sendEvent(opened('U0ALICE', 'messages'));
    const posted = await waitUntil(() => {
      const calls = h.slack.callsTo('chat.postMessage');
      return calls.length === 2 && calls[1]?.reply ? calls : undefined;
    });
    expect(posted.map((call) => (call.reply as { ok: boolean }).ok)).toEqual([false, true]);
    expect(String(posted[1]?.params.text)).toMatch(/^Hi <@U0ALICE>!/);
  });

  it('a message written there is a conversation like any other: status, streamed answer', async () => {
    h = await startHarness();
    h.model.enqueue(reply.text('It is noon in Tokyo.'));
    const ts = await h.message('What time is it in Tokyo?', {
      user: 'U0ALICE',
      channel: DM,
      channelType: 'im',
    });
    await h.waitForText((text) => text === 'It is noon in Tokyo.');
    const start = await h.slack.waitForCall('chat.startStream');
    expect(start.params).toMatchObject({ channel: DM, thread_ts: ts, recipient_user_id: 'U0ALICE' });
    const session = await h.slack.waitForCall('agents.sessions.setStatus');
    expect(session.params).toMatchObject({
      channel_id: DM,
      thread_ts: ts,
      status: 'processing',
      title: 'What time is it in Tokyo?',
      initiator_user_id: 'U0ALICE',
    });
  });
});
