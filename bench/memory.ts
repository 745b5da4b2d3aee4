import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { type BotProcess, startBotProcess } from '../test/support/bot-process.js';
import { sleep } from '../test/support/wait.js';
import { type BenchResult, target } from './report.js';
import { clickRequest, pauseThreads, scriptApprovalFlow, startFakes, waitForAnswers } from './rig.js';

export interface MemorySize {
  threads: number;
}

/** Resident set size of a process in MiB (Linux /proc). */
function rssMiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match?.[1]) throw new Error(`no VmRSS for process ${pid}`);
  return Number(match[1]) / 1024;
}

const healthSchema = z.object({
  memory: z.object({
    threads: z.array(z.object({ heapUsed: z.number(), heapTotal: z.number(), external: z.number() })),
  }),
});

/**
 * Where a process's memory is (MiB): its resident set; the JavaScript heaps of all its threads, in use and
 * reserved; what their objects keep outside the heaps (buffers); the rest is the Node binary and native memory
 * (SQLite's page cache, thread stacks, allocator arenas).
 */
async function memoryOf(bot: BotProcess): Promise<Record<string, number>> {
  const rss = rssMiB(bot.pid);
  const { threads } = healthSchema.parse(await (await fetch(`${bot.url}/healthz`)).json()).memory;
  const sum = (key: 'heapUsed' | 'heapTotal' | 'external') => threads.reduce((n, t) => n + t[key], 0);
  return {
    'RSS MiB': rss,
    'heap used': sum('heapUsed'),
    'heap reserved': sum('heapTotal'),
    external: sum('external'),
    'binary and native': rss - sum('heapTotal') - sum('external'),
  };
}

/** RSS of the real bot process (`src/main.ts`) with `threads` pending approvals, and after all are decided. */
export async function benchMemory(size: MemorySize): Promise<BenchResult> {
  const fakes = await startFakes();
  let bot: BotProcess | undefined;
  try {
    // The memory figures come from /healthz, which gives them only with HEALTHZ_DETAILS.
    bot = await startBotProcess({ env: { ...fakes.env, HEALTHZ_DETAILS: 'true' } });
    scriptApprovalFlow(fakes.model);
    const url = `${bot.url}/slack/events`;
    // One warm-up conversation, so the baseline includes code loaded on first use.
    const [warm] = await pauseThreads(fakes, url, 1);
    if (!warm) throw new Error('no warm-up card');
    await fakes.load.fire([clickRequest(url, warm)]);
    await waitForAnswers(fakes, 1);
    await sleep(500);
    const baseline = await memoryOf(bot);
    const cards = await pauseThreads(fakes, url, size.threads);
    await sleep(500);
    const pending = await memoryOf(bot);
    for (let i = 0; i < cards.length; i += 50) {
      await fakes.load.fire(cards.slice(i, i + 50).map((card) => clickRequest(url, card)));
    }
    await waitForAnswers(fakes, size.threads + 1);
    await sleep(500);
    const decided = await memoryOf(bot);
    return {
      id: 'memory',
      title: `Memory of the bot process (RSS) with ${size.threads} pending approvals in ${size.threads} threads`,
      rows: [
        { case: 'after start (1 warm-up run)', metrics: baseline },
        { case: `${size.threads} approvals pending`, metrics: pending },
        { case: 'all decided and answered', metrics: decided },
      ],
      targets: [
        target('RSS after start', baseline['RSS MiB'] ?? Number.NaN, 100, 'MiB'),
        target(
          `RSS after ${size.threads} decisions / after start`,
          (decided['RSS MiB'] ?? Number.NaN) / (baseline['RSS MiB'] ?? Number.NaN),
          1.5,
          '×',
        ),
      ],
      notes: [
        'the bot runs as its own process, as npm start runs it (compiled, with its worker threads), against the fakes in the bench process',
        'heaps and external memory summed over the threads, from /healthz; "binary and native" = RSS − reserved heaps − external',
      ],
    };
  } finally {
    await bot?.kill('SIGTERM');
    await fakes.close();
  }
}
