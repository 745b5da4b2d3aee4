import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { IncomingMessage } from '../../src/conversations/surface-ports.js';
import { silentLogger } from '../../src/logger.js';
import { startWorkerPool, type WorkerPool } from '../../src/workers/worker-pool.js';
import { type LocalServer, listenLocal } from '../support/local-server.js';
import { waitUntil } from '../support/wait.js';

const STAND_IN = new URL('../fixtures/role-worker.mjs', import.meta.url);

/** A message as the intake hands it over; the stand-in worker only reads its text. */
const message = (text: string, threadTs = '1.0') =>
  ({ teamId: 'T1', channelId: 'C1', threadTs, messageTs: threadTs, userId: 'U1', text }) as IncomingMessage;

describe('the worker pool: runs in the run workers, the console in a worker of its own', () => {
  let dir: string;
  let pool: WorkerPool | undefined;
  let server: LocalServer | undefined;
  afterEach(async () => {
    await server?.close();
    await pool?.stop(100);
    pool = undefined;
    server = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** A pool of `runWorkers` stand-ins behind an HTTP server that hands `/console` to it, as the bot's does. */
  async function start(runWorkers: number) {
    dir = mkdtempSync(join(tmpdir(), 'pool-roles-'));
    const log = join(dir, 'worker.log');
    const started = startWorkerPool(
      runWorkers,
      { config: { log, console: {} }, owner: 'test' } as never,
      silentLogger,
      STAND_IN,
    );
    pool = started;
    server = await listenLocal(async (req, res) => {
      started.console(req, res);
    });
    const url = `http://127.0.0.1:${server.port}`;
    const lines = () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);
    const get = async (path: string) => {
      const res = await fetch(`${url}${path}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    await waitUntil(async () => (await get('/console/api/me')).status === 200, { timeoutMs: 10_000 });
    return { pool: started, lines, get };
  }

  it('answers the console from its own worker while the only run worker is stuck; runs never go to it', async () => {
    const rig = await start(1);
    await waitUntil(() => rig.pool.running() === 2, { timeoutMs: 10_000 });
    rig.pool.message(message('first', '1.0'), ['k1']);
    rig.pool.message(message('block', '2.0'), ['k2']);
    await waitUntil(() => rig.lines().includes('runs+background message block'), { timeoutMs: 10_000 });
    // The run worker spins now: had the console been relayed to it, these would never be answered.
    for (let i = 0; i < 5; i++)
      expect(await rig.get(`/console/api/page-${i}`)).toEqual({
        status: 200,
        body: { role: 'console', path: `/console/api/page-${i}` },
      });
    expect(rig.lines().filter((line) => line.startsWith('console '))).toEqual([]);
  });

  it('passes what follows a decision made on the web on to a run worker', async () => {
    const rig = await start(2);
    expect((await rig.get('/console/api/decide')).body.role).toBe('console');
    await waitUntil(() => rig.lines().some((line) => line.endsWith('settled apr_web')), {
      timeoutMs: 10_000,
    });
    const settled = rig.lines().filter((line) => line.endsWith('settled apr_web'));
    expect(settled).toHaveLength(1);
    expect(settled[0]).toMatch(/^runs(\+background)? settled/);
  });

  it('a console worker that dies: its request in flight gets 503 JSON at once, then a new one answers', async () => {
    const rig = await start(1);
    const died = await rig.get('/console/api/die');
    expect(died.status).toBe(503);
    expect(died.body).toMatchObject({ error: { code: expect.stringMatching(/^(unavailable|starting)$/) } });
    await waitUntil(async () => (await rig.get('/console/api/again')).status === 200, { timeoutMs: 10_000 });
    expect((await rig.get('/console/api/again')).body.role).toBe('console');
    expect(rig.lines().filter((line) => line === 'started console')).toHaveLength(2);
    expect(rig.lines().filter((line) => line === 'started runs+background')).toHaveLength(1);
  });
});
