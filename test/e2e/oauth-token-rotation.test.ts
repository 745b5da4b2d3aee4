import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { reply } from '../support/fake-openai.js';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';
import { installWorkspace, oauthEnv } from '../support/oauth-installs.js';
import { type FreshDatabase, freshDatabase } from '../support/test-database.js';
import { type Harness, startHarness } from './harness.js';
import { enableOAuth, mentionIn } from './oauth-support.js';

const HOUR = 3600;

/** What the fake answered a call: `ok`, or Slack's error code. */
const outcome = (reply: unknown) =>
  reply && typeof reply === 'object' && 'error' in reply ? String(reply.error) : 'ok';

describe('token rotation, three bots of one deployment on PostgreSQL', () => {
  let slack: FakeSlack;
  let database: FreshDatabase;
  const bots: Harness[] = [];
  afterEach(async () => {
    for (const bot of bots.splice(0)) await bot.close();
    await slack.close();
    await database.drop();
  });

  it('a token about to expire is refreshed once, whichever bots take events at once; every call has a valid token', async () => {
    slack = await startFakeSlack();
    database = await freshDatabase('postgres');
    // One deployment: the same keys and secrets, the same database, the same Slack app.
    const env = oauthEnv();
    // Three processes, as on three hosts: in this one test process they would share a pid, which makes each
    // take the others for a restarted life of itself, whose leases are over.
    for (let n = 0; n < 3; n += 1)
      bots.push(
        await startHarness({ env, database, slack, overrides: { owner: `bot-${n}.test:main:1:${n}` } }),
      );
    const [first] = bots;
    if (!first) throw new Error('no bot');
    // Installed with rotation on and a token that expires in ten minutes; Slack's later tokens live 12 hours.
    slack.oauth.rotateTokens(10 * 60);
    await installWorkspace(first.slack, enableOAuth(first), { teamId: 'T1' });
    slack.oauth.rotateTokens(12 * HOUR);
    const installed = z
      .object({ access_token: z.string() })
      .parse(slack.callsTo('oauth.v2.access')[0]?.reply);
    for (const [n, bot] of bots.entries()) bot.model.enqueue(reply.text(`Answer ${n}.`));
    const installCalls = slack.calls.length;

    await Promise.all(bots.map((bot, n) => mentionIn(bot, 'T1', `question ${n}`)));
    await Promise.all(bots.map((bot, n) => bot.waitForText((text) => text === `Answer ${n}.`)));

    expect(slack.oauth.refreshes.map((r) => r.outcome)).toEqual(['refreshed']);
    const withTokens = slack.calls.slice(installCalls).filter((call) => call.token !== undefined);
    expect(withTokens.length).toBeGreaterThan(3);
    expect(withTokens.map((call) => outcome(call.reply)).filter((o) => o !== 'ok')).toEqual([]);
    // Every call of the three bots went out with the refreshed token, none with the one about to expire.
    const tokens = new Set(withTokens.map((call) => call.token));
    expect(tokens.size).toBe(1);
    expect(tokens.has(installed.access_token)).toBe(false);
  });
});
