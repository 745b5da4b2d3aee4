import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { createSlackRuntime, type SlackRuntime } from '../../src/slack/app.js';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';

describe('/healthz details', () => {
  let slack: FakeSlack;
  let runtime: SlackRuntime | undefined;

  beforeEach(async () => {
    slack = await startFakeSlack();
  });
  afterEach(async () => {
    await runtime?.stop();
    runtime = undefined;
    await slack.close();
  });

  /** Starts the HTTP intake; returns /healthz's body and what each health check was asked for. */
  const check = async (healthDetails: boolean) => {
    const asked: boolean[] = [];
    runtime = createSlackRuntime({
      botToken: 'xoxb-test',
      mode: { kind: 'http', signingSecret: 'secret' },
      apiUrl: `${slack.url}/api/`,
      port: 0,
      logLevel: 'error',
      logger: silentLogger,
      clock: { now: () => Date.now() },
      healthDetails,
      health: async (withDetail) => {
        asked.push(withDetail);
        return { ok: true, detail: withDetail ? { workers: 3 } : undefined };
      },
    });
    const { port } = await runtime.start();
    const body = (await (await fetch(`http://127.0.0.1:${port}/healthz`)).json()) as Record<string, unknown>;
    return { body, asked };
  };

  it('are not even gathered for an unauthenticated caller unless HEALTHZ_DETAILS is on', async () => {
    const { body, asked } = await check(false);
    expect(body).toEqual({ status: 'ok' });
    // Gathering them asks every worker for its memory and reads the SIEM lag: not for every anonymous request.
    expect(asked).toEqual([false]);
  });

  it('are gathered and given when HEALTHZ_DETAILS is on', async () => {
    const { body, asked } = await check(true);
    expect(body).toMatchObject({ status: 'ok', mode: 'http', workers: 3 });
    expect(asked).toEqual([true]);
  });
});
