import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runBotProcessToExit } from '../support/bot-process.js';
import { reply } from '../support/fake-openai.js';
import { DATABASE_KINDS } from '../support/test-database.js';
import { waitUntil } from '../support/wait.js';
import { cardTs } from './harness.js';
import { type ProcessFixture, startProcessFixture } from './process-fixture.js';

describe.each(DATABASE_KINDS)('the real entry point as a child process, on %s', (kind) => {
  let f: ProcessFixture;
  beforeEach(async () => {
    f = await startProcessFixture({ kind });
  });
  afterEach(async () => {
    await f.close();
  });

  const storedCardTs = async () => (await f.query('SELECT message_ts AS ts FROM approvals'))[0]?.ts;

  it('/healthz counts the workers that are ready and gives the memory of each thread that runs', async () => {
    const bot = await f.start({ WORKERS: '2', HEALTHZ_DETAILS: 'true' });
    const health = async () => {
      const body = (await (await fetch(`${bot.url}/healthz`)).json()) as {
        status: string;
        workers: number;
        memory: { rss: number; threads: { heapUsed: number; heapTotal: number; external: number }[] };
      };
      // The intake thread, then each ready worker: a worker still loading is neither counted nor waited for.
      expect(body.memory.threads).toHaveLength(1 + body.workers);
      return body;
    };
    expect((await health()).status).toBe('ok');
    // Two run workers and the console's own.
    await waitUntil(async () => (await health()).workers === 3, { timeoutMs: 10_000 });
    const { memory } = await health();
    for (const thread of memory.threads) expect(thread.heapUsed).toBeGreaterThan(1);
    expect(memory.rss).toBeGreaterThan(memory.threads.reduce((sum, t) => sum + t.heapUsed, 0));
    await bot.kill('SIGTERM');
  });

  it('a card survives SIGKILL: after a restart the click completes the run, and the tool ran once', async () => {
    let bot = await f.start();
    f.model.enqueue(reply.toolCalls([{ name: 'create_note', arguments: { text: 'survives' } }]));
    const ts = await f.mention(bot, 'note');
    const [card] = await f.waitForCards(1);
    if (!card) throw new Error('no card');
    // The card's ts is stored right after Slack answers; kill once it is, as a crash while the card waits.
    await waitUntil(async () => (await storedCardTs()) === cardTs(card), { timeoutMs: 10_000 });
    expect(await bot.kill('SIGKILL')).toBeNull();
    if (kind === 'sqlite') expect(statSync(f.dbPath).mode & 0o777).toBe(0o600);

    bot = await f.start();
    f.model.enqueue(reply.text('The note survived the restart.'));
    expect((await f.click(bot, card, 'approve', 'U2')).status).toBe(200);
    await f.waitForText((text) => text === 'The note survived the restart.');
    const answer = f.slack
      .callsTo('chat.postMessage')
      .find((c) => c.params.text === 'The note survived the restart.');
    expect(answer?.params.thread_ts).toBe(ts);
    const update = await f.slack.waitForCall('chat.update');
    expect(update.params.ts).toBe(cardTs(card));

    await bot.kill('SIGTERM');
    expect(await f.query('SELECT text FROM notes')).toEqual([{ text: 'survives' }]);
    expect(await f.query('SELECT status FROM approvals')).toEqual([{ status: 'executed' }]);
    expect(bot.output()).not.toContain(f.env.SLACK_BOT_TOKEN);
    expect(bot.output()).not.toContain(f.env.OPENAI_API_KEY);
  });
});

describe('the real entry point with missing settings', () => {
  it('lists every problem and exits 1 without a stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bot-settings-'));
    const result = await runBotProcessToExit({
      env: { DATABASE_PATH: join(dir, 'x.db'), ADMIN_USER_IDS: 'not-an-id' },
    });
    rmSync(dir, { recursive: true, force: true });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('SLACK_BOT_TOKEN');
    expect(result.stderr).toContain('ADMIN_USER_IDS');
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });
});
