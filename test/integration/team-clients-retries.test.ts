import { LogLevel, type WebClientOptions } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { NotInstalled } from '../../src/conversations/delivery.js';
import { silentLogger } from '../../src/logger.js';
import { createSlackClients } from '../../src/slack/installations/team-clients.js';
import { type FakeSlack, slackReply, startFakeSlack } from '../support/fake-slack.js';

/**
 * The Web API client sends a failed request again with the token its call began with. A workspace's client must
 * not: between two tries the app may have been removed (its token revoked) or installed again (a new token).
 */
describe("a workspace's client, when its token changes between two tries of one call", () => {
  let slack: FakeSlack;
  /** T1's stored bot token; undefined once the app is removed. */
  let stored: string | undefined;
  beforeEach(async () => {
    slack = await startFakeSlack();
    stored = 'xoxb-first';
  });
  afterEach(async () => slack.close());

  const clientOfT1 = (options: WebClientOptions = {}) =>
    createSlackClients(
      { kind: 'installations', botToken: async () => stored },
      { slackApiUrl: slack.url, logLevel: LogLevel.ERROR, ...options },
      silentLogger,
    ).forTeam('T1');
  const post = (options?: WebClientOptions) =>
    clientOfT1(options).chat.postMessage({ channel: 'C1', text: 'hello' });
  const sent = () => slack.callsTo('chat.postMessage').map((call) => call.token);

  it('a request that failed is not sent again once the app is removed: the call ends as not installed', async () => {
    slack.setResponse('chat.postMessage', () => {
      stored = undefined;
      return slackReply.http(500);
    });
    const failure = await post({ retryConfig: { retries: 3, minTimeout: 10, maxTimeout: 10 } }).catch(
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(NotInstalled);
    expect(sent()).toEqual(['xoxb-first']);
  });

  it('a rate limit waited out under the default policy (half an hour of retries) ends at the next try', async () => {
    slack.setResponse('chat.postMessage', () => {
      stored = undefined;
      return slackReply.rateLimited(1);
    });
    const began = Date.now();
    const failure = await post().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(NotInstalled);
    expect(sent()).toEqual(['xoxb-first']);
    // The second Retry-After wait would be another second and more: the call ended at its first retry.
    expect(Date.now() - began).toBeLessThan(5_000);
  });

  it('a token replaced meanwhile (installed again, rotated) is the one the next try carries', async () => {
    slack.setResponse('chat.postMessage', (params) => {
      if (sent().length > 1) return slackReply.ok({ channel: params.channel, ts: '1.1' });
      stored = 'xoxb-second';
      return slackReply.http(500);
    });
    await post({ retryConfig: { retries: 1, minTimeout: 10, maxTimeout: 10 } });
    expect(sent()).toEqual(['xoxb-first', 'xoxb-second']);
  });

  it('a call for a workspace without the app sends nothing', async () => {
    stored = undefined;
    await expect(post()).rejects.toBeInstanceOf(NotInstalled);
    expect(sent()).toEqual([]);
  });
});
