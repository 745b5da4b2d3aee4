import { randomBytes } from 'node:crypto';
import type { Installation } from '@slack/bolt';
import { WebClient } from '@slack/web-api';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { silentLogger } from '../../src/logger.js';
import { createSealedInstallations } from '../../src/slack/installations/installation-store.js';
import { createSlackClients, type SlackClients } from '../../src/slack/installations/team-clients.js';
import { createTokenCipher } from '../../src/slack/installations/token-cipher.js';
import { slackTokenExchange, type TokenExchange } from '../../src/slack/installations/token-refresh.js';
import { rows } from '../e2e/db-rows.js';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';

const APP = { clientId: '111.222', clientSecret: 'client-secret' };
const KEY = randomBytes(32);
const HOUR = 3600;

/** What Slack's `oauth.v2.access` answers to a code, as far as an installation needs it. */
const installAnswer = z.object({
  access_token: z.string(),
  refresh_token: z.string().optional(),
  expires_in: z.number().optional(),
});

/** Installs the app into T1 at the fake as `InstallProvider` would store it: token, refresh token, expiry. */
async function installT1(slack: FakeSlack): Promise<Installation> {
  slack.oauth.installAs({ teamId: 'T1' });
  const authorize = await fetch(
    `${new URL(slack.url).origin}/oauth/v2/authorize?client_id=${APP.clientId}&state=s`,
    { redirect: 'manual' },
  );
  const code = new URL(authorize.headers.get('location') ?? '').searchParams.get('code') ?? '';
  const client = new WebClient(undefined, { slackApiUrl: slack.url });
  const answer = installAnswer.parse(
    await client.oauth.v2.access({ client_id: APP.clientId, client_secret: APP.clientSecret, code }),
  );
  const now = Math.floor(Date.now() / 1000);
  return {
    team: { id: 'T1' },
    enterprise: undefined,
    user: { id: 'UINSTALLER', token: undefined, scopes: undefined },
    bot: {
      token: answer.access_token,
      id: 'BBOT',
      userId: 'UBOT',
      scopes: ['chat:write'],
      ...(answer.refresh_token && answer.expires_in
        ? { refreshToken: answer.refresh_token, expiresAt: now + answer.expires_in }
        : {}),
    },
    isEnterpriseInstall: false,
    authVersion: 'v2',
  };
}

/** One process's view: its own database connection and lease owner, its installations and clients. */
function processOn(
  s: TestStores,
  slack: FakeSlack,
  exchange: TokenExchange = slackTokenExchange({ ...APP, apiUrl: slack.url }),
) {
  const installations = createSealedInstallations(
    s.stores.installations,
    createTokenCipher({ current: KEY, previous: undefined }),
    { now: () => Date.now() },
    { exchange, logger: silentLogger },
  );
  const clients: SlackClients = createSlackClients(
    {
      kind: 'installations',
      botToken: (team, enterprise, refused) => installations.botToken(team, enterprise, refused),
    },
    { slackApiUrl: slack.url, retryConfig: { retries: 0 } },
    silentLogger,
  );
  return { installations, clients };
}

const post = (clients: SlackClients, text: string) =>
  clients.forTeam('T1').chat.postMessage({ channel: 'C1', text });

describe.each(DATABASE_KINDS)('token rotation on %s', (kind) => {
  let s: TestStores;
  let slack: FakeSlack;
  beforeEach(async () => {
    s = await openTestStores(kind);
    slack = await startFakeSlack();
    slack.oauth.enable({ ...APP, redirectUrl: 'http://127.0.0.1/slack/oauth_redirect' });
  });
  afterEach(async () => {
    await s.close();
    await slack.close();
  });

  /** T1 installed with a token that lives `seconds`; tokens issued afterwards live 12 hours. */
  const installExpiringIn = async (seconds: number) => {
    slack.oauth.rotateTokens(seconds);
    const installation = await installT1(slack);
    await processOn(s, slack).installations.storeInstallation(installation);
    slack.oauth.rotateTokens(12 * HOUR);
    return installation;
  };

  it('a token that expires within two hours is refreshed before the call, stored sealed and audited, once', async () => {
    const installed = await installExpiringIn(HOUR);
    const { clients } = processOn(s, slack);
    await post(clients, 'first');
    await post(clients, 'second');
    expect(slack.oauth.refreshes.map((r) => r.outcome)).toEqual(['refreshed']);
    const posts = slack.callsTo('chat.postMessage');
    expect(posts.map((call) => call.token === installed.bot?.token)).toEqual([false, false]);
    expect(posts.map((call) => slack.oauth.teamOf(call.token))).toEqual(['T1', 'T1']);
    const audited = await rows(
      s.fresh.config,
      "select team_id, payload from audit_events where kind = 'installation.token_refreshed'",
    );
    expect(audited.map((r) => r.team_id)).toEqual(['T1']);
    // Bolt's authorize gets the fresh token without the refresh token, so it never refreshes on its own.
    const forBolt = await processOn(s, slack).installations.fetchInstallation({
      teamId: 'T1',
      enterpriseId: undefined,
      isEnterpriseInstall: false,
    });
    expect(forBolt.bot?.token).toBe(posts[0]?.token);
    expect(forBolt.bot?.refreshToken).toBeUndefined();
    const dump =
      JSON.stringify(await rows(s.fresh.config, 'select * from slack_installations')) +
      JSON.stringify(audited);
    for (const secret of [posts[0]?.token, installed.bot?.token, installed.bot?.refreshToken])
      expect(dump).not.toContain(String(secret).slice(5));
    expect(dump).not.toContain('xoxe-');
  });

  it('a token with more than two hours left is used as it is', async () => {
    const installed = await installExpiringIn(3 * HOUR);
    await post(processOn(s, slack).clients, 'hello');
    expect(slack.oauth.refreshes).toEqual([]);
    expect(slack.callsTo('chat.postMessage').map((call) => call.token)).toEqual([installed.bot?.token]);
  });

  it('a call refused with token_expired is made once more with a refreshed token, and only once', async () => {
    await installExpiringIn(12 * HOUR);
    slack.oauth.expire('T1');
    const { clients } = processOn(s, slack);
    const answered = await post(clients, 'after expiry');
    expect(answered.ok).toBe(true);
    const posts = slack.callsTo('chat.postMessage');
    expect(posts.map((call) => (call.reply as { error?: string }).error ?? 'ok')).toEqual([
      'token_expired',
      'ok',
    ]);
    expect(slack.oauth.refreshes.map((r) => r.outcome)).toEqual(['refreshed']);
    // Refused again with the new token: no third attempt, no second refresh.
    slack.setResponse('chat.postMessage', () => ({ body: { ok: false, error: 'invalid_auth' } }));
    await expect(post(clients, 'refused')).rejects.toMatchObject({ data: { error: 'invalid_auth' } });
    expect(slack.callsTo('chat.postMessage')).toHaveLength(4);
    expect(slack.oauth.refreshes).toHaveLength(2);
  });

  it('a refresh Slack refuses fails the call with what to do, stores nothing, and lets the next call try again', async () => {
    const installed = await installExpiringIn(HOUR);
    // Its refresh token used already (by a copy of the database, say): Slack takes each one once.
    const client = new WebClient(undefined, { slackApiUrl: slack.url });
    await client.oauth.v2.access({
      client_id: APP.clientId,
      client_secret: APP.clientSecret,
      grant_type: 'refresh_token',
      refresh_token: String(installed.bot?.refreshToken),
    });
    const { clients } = processOn(s, slack);
    await expect(post(clients, 'refused')).rejects.toMatchObject({
      code: 'slack.token_refresh_failed',
      message: expect.stringContaining('install the app there again from /slack/install'),
    });
    await expect(post(clients, 'again')).rejects.toMatchObject({ code: 'slack.token_refresh_failed' });
    expect(slack.oauth.refreshes.map((r) => r.outcome)).toEqual([
      'refreshed',
      'invalid_refresh_token',
      'invalid_refresh_token',
    ]);
    expect(slack.callsTo('chat.postMessage')).toEqual([]);
    const stored = await rows(s.fresh.config, 'select lease_owner from slack_installations');
    expect(stored).toEqual([{ lease_owner: null }]);
  });

  it('a refresh whose claim ran out while Slack answered still keeps the new tokens: the old refresh token is spent', async () => {
    await installExpiringIn(HOUR);
    const real = slackTokenExchange({ ...APP, apiUrl: slack.url });
    let answered: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      answered = resolve;
    });
    // The first process's claim lasts a millisecond, and Slack's answer reaches it late.
    const slow = processOn(await s.another({ leaseMs: 1 }), slack, async (token) => {
      const answer = await real(token);
      await held;
      return answer;
    });
    const first = post(slow.clients, 'slow');
    await waitUntil(() => slack.oauth.refreshes.length === 1 || undefined, {
      timeoutMs: 5000,
      message: 'no refresh',
    });
    // Another process takes the claim that ran out; Slack refuses the spent refresh token.
    const other = processOn(s, slack);
    await expect(post(other.clients, 'meanwhile')).rejects.toMatchObject({
      code: 'slack.token_refresh_failed',
    });
    answered();
    expect((await first).ok).toBe(true);
    expect((await post(other.clients, 'after')).ok).toBe(true);
    expect(slack.oauth.refreshes.map((r) => r.outcome)).toEqual(['refreshed', 'invalid_refresh_token']);
  });

  it('three processes calling at once with a token about to expire: one refresh, every call with a valid token', async () => {
    await installExpiringIn(10 * 60);
    const processes = [
      processOn(s, slack),
      processOn(await s.another(), slack),
      processOn(await s.another(), slack),
    ];
    const calls = processes.flatMap(({ clients }, p) =>
      [1, 2, 3, 4].map((n) => post(clients, `process ${p} call ${n}`)),
    );
    const answers = await Promise.all(calls);
    expect(answers.every((answer) => answer.ok)).toBe(true);
    expect(slack.oauth.refreshes).toEqual([{ refreshToken: expect.any(String), outcome: 'refreshed' }]);
    const posts = slack.callsTo('chat.postMessage');
    expect(posts).toHaveLength(12);
    expect(new Set(posts.map((call) => call.token)).size).toBe(1);
    const audited = await rows(
      s.fresh.config,
      "select count(*) as n from audit_events where kind = 'installation.token_refreshed'",
    );
    expect(Number(audited[0]?.n)).toBe(1);
  });
});
