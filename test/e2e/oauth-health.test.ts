import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { installWorkspace, oauthEnv } from '../support/oauth-installs.js';
import { type Harness, startHarness } from './harness.js';
import { enableOAuth } from './oauth-support.js';

describe('/healthz installed into several workspaces', () => {
  let h: Harness;
  let base: string;
  beforeEach(async () => {
    h = await startHarness({ env: oauthEnv(), overrides: { installationCheckMs: 0 } });
    base = enableOAuth(h);
  });
  afterEach(async () => h.close());

  const health = async () => {
    const response = await fetch(`${base}/healthz`);
    return { status: response.status, body: await response.json() };
  };
  const refusalLogged = (teamId: string) =>
    h.logs.filter(
      (line) =>
        line.includes('slack refuses the token of an installed workspace') &&
        line.includes(`"workspace":"${teamId}"`) &&
        line.includes('install the app there again from /slack/install'),
    );

  it('healthy with none installed (saying how to install), while one token works, and not once Slack refuses every one, each named in the log', async () => {
    expect(await health()).toEqual({
      status: 200,
      body: { status: 'ok', note: 'no workspace installed yet, open /slack/install' },
    });
    await installWorkspace(h.slack, base, { teamId: 'T1' });
    await installWorkspace(h.slack, base, { teamId: 'T2' });
    const installed = h.slack.calls.length;
    expect(await health()).toEqual({ status: 200, body: { status: 'ok' } });
    // Each installation's own token is asked.
    expect(
      h.slack.calls.slice(installed).map((call) => [call.method, h.slack.oauth.teamOf(call.token)]),
    ).toEqual([
      ['auth.test', 'T1'],
      ['auth.test', 'T2'],
    ]);

    h.slack.oauth.revoke('T1');
    expect(await health()).toEqual({ status: 200, body: { status: 'ok' } });
    expect(refusalLogged('T1')).toHaveLength(1);
    h.slack.oauth.revoke('T2');
    expect(await health()).toEqual({ status: 503, body: { status: 'unavailable' } });
    expect(await health()).toEqual({ status: 503, body: { status: 'unavailable' } });
    // Each refused workspace is named once, however often it is asked.
    expect(refusalLogged('T1')).toHaveLength(1);
    expect(refusalLogged('T2')).toHaveLength(1);
  });
});
