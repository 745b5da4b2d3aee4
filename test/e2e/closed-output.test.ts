import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type BotProcess, startBotProcess } from '../support/bot-process.js';
import { reply } from '../support/fake-openai.js';
import { waitUntil } from '../support/wait.js';
import { type ProcessFixture, startProcessFixture } from './process-fixture.js';

/** CPU seconds (user and system) the process `pid` has used so far, from /proc. */
function cpuSeconds(pid: number): number {
  // Fields after the command's closing parenthesis: state is the 3rd field, utime the 14th, stime the 15th.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Clock ticks: 100 a second on Linux.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const healthz = async (url: string) => (await fetch(`${url}/healthz`)).status;

/**
 * `npm start 2>&1 | head -4`: the reader closes the pipe, so every later write to stdout or stderr fails
 * (EPIPE). That failure must not be logged to the same stream again and again.
 */
describe.runIf(process.platform === 'linux')('a bot whose output pipe is closed', () => {
  let f: ProcessFixture;
  let running: BotProcess | undefined;
  beforeEach(async () => {
    f = await startProcessFixture();
  });
  afterEach(async () => {
    // Killed here too, so a failed assertion leaves no bot running.
    await running?.kill();
    running = undefined;
    await f.close();
  });

  it('keeps answering /healthz without spinning, and its log lines are dropped, not looped', async () => {
    const bot = await startBotProcess({
      // Debug logging: every request writes to the closed pipe.
      env: { ...f.env, LOG_LEVEL: 'debug' },
      closeOutputAfterLines: 4,
    });
    running = bot;
    // Requests that make the bot log (an unsigned event is refused with a warning) after the pipe closed.
    for (let i = 0; i < 5; i += 1) {
      const refused = await fetch(`${bot.url}/slack/events`, { method: 'POST', body: '{}' });
      expect(refused.status).toBe(401);
    }
    // Its worker threads (runs, the console) load their modules after /healthz first answers: wait for a quiet
    // half second, so what is measured is the closed pipe, not the start. A bot looping on it never gets there.
    await waitUntil(
      async () => {
        const from = cpuSeconds(bot.pid);
        await new Promise((resolve) => setTimeout(resolve, 500));
        return cpuSeconds(bot.pid) - from < 0.1;
      },
      { timeoutMs: 20_000, intervalMs: 0, message: 'the bot never went quiet after its start' },
    );
    const before = cpuSeconds(bot.pid);
    const started = Date.now();
    let answered = 0;
    // A window of at least two seconds while the bot is asked for its health.
    await waitUntil(
      async () => {
        expect(await healthz(bot.url)).toBe(200);
        answered += 1;
        return Date.now() - started >= 2000;
      },
      // A health check every 20 ms: the CPU share below is for this rate.
      { timeoutMs: 20_000, intervalMs: 20 },
    );
    const share = (cpuSeconds(bot.pid) - before) / ((Date.now() - started) / 1000);
    // A loop logging its own failure keeps a core busy (close to 1); serving a few health checks costs little.
    expect(share).toBeLessThan(0.3);
    expect(answered).toBeGreaterThan(5);
    // It still serves Slack: a mention is answered in the thread.
    f.model.enqueue(reply.text('Still here.'));
    await f.mention(bot, 'are you there?');
    await f.waitForText((text) => text === 'Still here.');
    expect(await bot.kill('SIGTERM')).toBe(0);
  }, 60_000);
});
