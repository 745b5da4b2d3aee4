import { Agent, request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/logger.js';
import { createSlackRuntime, type SlackRuntime, type SlackRuntimeOptions } from '../../src/slack/app.js';
import { type FakeSlack, startFakeSlack } from '../support/fake-slack.js';

/** The HTTP intake against the fake Slack, silent, on a free port; `options` add the rest. */
function httpRuntime(
  slack: FakeSlack,
  options: Omit<
    SlackRuntimeOptions,
    'botToken' | 'mode' | 'apiUrl' | 'port' | 'logLevel' | 'logger' | 'clock'
  >,
): SlackRuntime {
  return createSlackRuntime({
    botToken: 'xoxb-test',
    mode: { kind: 'http', signingSecret: 'secret' },
    apiUrl: `${slack.url}/api/`,
    port: 0,
    logLevel: 'error',
    logger: silentLogger,
    clock: { now: () => Date.now() },
    ...options,
  });
}

/** GET `path` over `agent`; resolves with the status. */
function get(port: number, path: string, agent: Agent): Promise<{ status: number }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('stopping the HTTP intake', () => {
  let slack: FakeSlack;
  let runtime: SlackRuntime | undefined;
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });

  beforeEach(async () => {
    slack = await startFakeSlack();
  });
  afterEach(async () => {
    agent.destroy();
    await slack.close();
  });

  it('closes a kept-alive connection whose request was in flight, so stop() resolves and nothing more is served', async () => {
    let release: () => void = () => undefined;
    let arrived: () => void = () => undefined;
    const reachedHandler = new Promise<void>((done) => (arrived = done));
    let healthCalls = 0;
    runtime = httpRuntime(slack, {
      health: async () => {
        healthCalls += 1;
        // The first health check is held until the test releases it: a request in flight when stop() begins.
        if (healthCalls === 1) {
          const held = new Promise<void>((done) => (release = done));
          arrived();
          await held;
        }
        return { ok: true, detail: {} };
      },
    });
    const { port } = await runtime.start();

    const inFlight = get(port, '/healthz', agent);
    await reachedHandler;
    const stopped = runtime.stop();
    release();
    // The request in flight is answered; its kept-alive connection is then closed, so the server stops at once
    // (not after the 5 s keep-alive timeout) and serves nothing more on it.
    expect((await inFlight).status).toBe(200);
    const outcome = await Promise.race([
      stopped.then(() => 'stopped'),
      new Promise((done) => setTimeout(() => done('still open after 2 s'), 2000)),
    ]);
    expect(outcome).toBe('stopped');
    await expect(get(port, '/healthz', agent)).rejects.toThrow(/ECONNREFUSED|socket hang up|ECONNRESET/);
    expect(healthCalls).toBe(1);
  });
});

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
    runtime = httpRuntime(slack, {
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
