import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { ApprovalClick } from '../../src/approvals/click-inbox.js';
import type { IncomingMessage } from '../../src/conversations/surface-ports.js';
import { silentLogger } from '../../src/logger.js';
import { startWorkerPool, type WorkerPool } from '../../src/workers/worker-pool.js';
import { waitUntil } from '../support/wait.js';

const STAND_IN = new URL('../fixtures/handover-worker.mjs', import.meta.url);

/** A message as the intake hands it over; the stand-in worker only reads its text. */
const message = (text: string) =>
  ({
    teamId: 'T1',
    channelId: 'C1',
    threadTs: '1.0',
    messageTs: '1.0',
    userId: 'U1',
    text,
  }) as IncomingMessage;

describe('a message handed to a worker thread', () => {
  let dir: string;
  let pool: WorkerPool | undefined;
  afterEach(async () => {
    await pool?.stop(100);
    pool = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const stored = (log: string) =>
    existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : [];

  it.each([
    { firstStart: 'die', what: 'ends while holding it' },
    { firstStart: 'fail', what: 'fails to start' },
  ] as const)(
    'reaches the next worker when the first $what (Slack already has its ack)',
    async ({ firstStart }) => {
      dir = mkdtempSync(join(tmpdir(), 'handover-'));
      const log = join(dir, 'stored.log');
      // The stand-in reads only its log file and how its first start goes.
      const data = { config: { log, firstStart }, owner: 'test' } as never;
      pool = startWorkerPool(1, data, silentLogger, STAND_IN);
      pool.message(message('first'), ['k1']);
      await waitUntil(() => stored(log).includes('first'), {
        timeoutMs: 10_000,
        message: 'the message was lost with the worker',
      });
      pool.message(message('second'), ['k2']);
      await waitUntil(() => stored(log).includes('second'), { timeoutMs: 10_000 });
      // Each stored once: a message the worker took is not handed over again.
      expect(stored(log)).toEqual(['first', 'second']);
    },
  );

  it('an acknowledged Approve click reaches the next worker when the first ends while holding it', async () => {
    dir = mkdtempSync(join(tmpdir(), 'handover-'));
    const log = join(dir, 'stored.log');
    pool = startWorkerPool(
      1,
      { config: { log, firstStart: 'die' }, owner: 'test' } as never,
      silentLogger,
      STAND_IN,
    );
    const click = (value: string): ApprovalClick => ({
      value,
      standing: false,
      userId: 'U2',
      teamId: 'T1',
      channelId: 'C1',
      messageTs: '1.1',
      threadTs: '1.0',
    });
    pool.click(click('apr_first'), 'sig:first');
    await waitUntil(() => stored(log).includes('click apr_first'), {
      timeoutMs: 10_000,
      message: 'the click was lost with the worker',
    });
    pool.click(click('apr_second'), 'sig:second');
    await waitUntil(() => stored(log).includes('click apr_second'), { timeoutMs: 10_000 });
    expect(stored(log)).toEqual(['click apr_first', 'click apr_second']);
  });
});
