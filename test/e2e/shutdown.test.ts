import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { refusesConnections } from '../support/bot-process.js';
import { reply } from '../support/fake-openai.js';
import { waitUntil } from '../support/wait.js';
import { approveSlowPost, type Latch, type ProcessFixture, useProcessFixture } from './process-fixture.js';

describe('shutdown (SIGTERM, SIGINT)', () => {
  let f: ProcessFixture;
  let held: Latch;
  useProcessFixture((fixture, latch) => {
    f = fixture;
    held = latch;
  });

  it('SIGTERM stops intake, lets the decision in flight finish, closes the database and exits 0', async () => {
    const bot = await f.start();
    await approveSlowPost(f, bot, held, 'Posted before stopping.');

    const exited = bot.kill('SIGTERM');
    await waitUntil(() => refusesConnections(bot.url)).catch((error: unknown) => {
      throw new Error(`the bot still accepted requests after SIGTERM; output:\n${bot.output()}`, {
        cause: error,
      });
    });
    held.open();
    expect(await exited).toBe(0);
    // A cleanly closed SQLite database in WAL mode leaves no write-ahead log behind.
    expect(existsSync(`${f.dbPath}-wal`)).toBe(false);
    expect(f.texts()).toContain('Posted before stopping.');
    expect(await f.query('select status from approvals')).toEqual([{ status: 'executed' }]);
    expect(bot.output()).toContain('stopped; database closed');
  });

  it('SIGINT during a model call waits at most the grace period; the run resumes after a restart', async () => {
    f.model.enqueue(reply.hang());
    let bot = await f.start({ SHUTDOWN_GRACE_MS: '300' });
    await f.mention(bot, 'a slow question');
    await f.model.waitForRequests(1, 15_000);
    expect(await bot.kill('SIGINT')).toBe(0);
    expect(existsSync(`${f.dbPath}-wal`)).toBe(false);
    expect(await f.query('select status from runs')).toEqual([{ status: 'running' }]);

    f.model.enqueue(reply.text('Answered after the restart.'));
    bot = await f.start();
    await f.waitForText((text) => text === 'Answered after the restart.');
    expect(f.model.requests).toHaveLength(2);
    expect(f.model.requests[1]?.messages.filter((m) => m.role === 'user')).toHaveLength(1);
  });
});
