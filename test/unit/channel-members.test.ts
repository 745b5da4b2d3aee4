import { webApi } from '@slack/bolt';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { createChannelMembership } from '../../src/slack/channel-members.js';
import { type FakeSlack, slackReply, startFakeSlack } from '../support/fake-slack.js';

describe('channel membership (who may stop)', () => {
  let slack: FakeSlack;
  let now: number;
  const client = () => {
    const one = new webApi.WebClient('xoxb-test', { slackApiUrl: slack.url, retryConfig: { retries: 0 } });
    return { forTeam: () => one };
  };
  const pagesOf = (channel: string) =>
    slack.callsTo('conversations.members').filter((c) => c.params.channel === channel).length;
  beforeEach(async () => {
    slack = await startFakeSlack();
    now = 0;
  });
  afterEach(async () => {
    await slack.close();
  });

  it('reads every page, keeps the answer for a minute, then asks again; racing questions share one lookup', async () => {
    const membership = createChannelMembership(client(), { now: () => now }, silentLogger);
    const people = Array.from({ length: 401 }, (_, i) => `U0P${String(i).padStart(4, '0')}`);
    slack.setMembers('C1', people);
    const ask = (userId: string) => membership.isMember({ teamId: 'T1', channelId: 'C1', userId });
    expect(await Promise.all([ask('U0P0400'), ask('U0P0000'), ask('U0NOBODY')])).toEqual([true, true, false]);
    expect(pagesOf('C1')).toBe(3);
    now = 59_999;
    expect(await ask('U0P0200')).toBe(true);
    expect(pagesOf('C1')).toBe(3);
    slack.setMembers('C1', ['U0NEW']);
    now = 60_000;
    expect(await ask('U0P0200')).toBe(false);
    expect(await ask('U0NEW')).toBe(true);
    expect(pagesOf('C1')).toBe(4);
  });

  it('keeps at most maxChannels answers, forgetting the oldest, and never keeps a failure', async () => {
    const membership = createChannelMembership(client(), { now: () => now }, silentLogger, {
      maxChannels: 2,
    });
    const ask = (channelId: string) => membership.isMember({ teamId: 'T1', channelId, userId: 'U1' });
    for (const channel of ['C1', 'C2', 'C3']) expect(await ask(channel)).toBe(true);
    // C1 was forgotten to make room for C3; C3 is still known.
    await ask('C3');
    await ask('C1');
    expect([pagesOf('C1'), pagesOf('C2'), pagesOf('C3')]).toEqual([2, 1, 1]);

    slack.setResponse('conversations.members', () => slackReply.error('missing_scope'));
    expect(await ask('C9')).toBe(false);
    slack.clearResponse('conversations.members');
    expect(await ask('C9')).toBe(true);
    expect(pagesOf('C9')).toBe(2);
  });
});
