import { readFileSync } from 'node:fs';
import { type BotProcess, startBotProcess } from '../test/support/bot-process.js';
import { sleep } from '../test/support/wait.js';
import type { BenchResult } from './report.js';
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

/** RSS of the real bot process (`src/main.ts`) with `threads` pending approvals, and after all are decided. */
export async function benchMemory(size: MemorySize): Promise<BenchResult> {
  const fakes = await startFakes();
  let bot: BotProcess | undefined;
  try {
    bot = await startBotProcess({ env: fakes.env });
    scriptApprovalFlow(fakes.model);
    const url = `${bot.url}/slack/events`;
    // One warm-up conversation, so the baseline includes code loaded on first use.
    const [warm] = await pauseThreads(fakes, url, 1);
    if (!warm) throw new Error('no warm-up card');
    await fakes.load.fire([clickRequest(url, warm)]);
    await waitForAnswers(fakes, 1);
    await sleep(500);
    const baseline = rssMiB(bot.pid);
    const cards = await pauseThreads(fakes, url, size.threads);
    await sleep(500);
    const pending = rssMiB(bot.pid);
    for (let i = 0; i < cards.length; i += 50) {
      await fakes.load.fire(cards.slice(i, i + 50).map((card) => clickRequest(url, card)));
    }
    await waitForAnswers(fakes, size.threads + 1);
    await sleep(500);
    const decided = rssMiB(bot.pid);
    return {
      id: 'memory',
      title: `Memory of the bot process (RSS) with ${size.threads} pending approvals in ${size.threads} threads`,
      rows: [
        { case: 'after start (1 warm-up run)', metrics: { 'RSS MiB': baseline } },
        { case: `${size.threads} approvals pending`, metrics: { 'RSS MiB': pending } },
        { case: 'all decided and answered', metrics: { 'RSS MiB': decided } },
      ],
      targets: [],
      notes: [
        'the bot runs as its own process (npm start entry point under tsx) against the fakes in the bench process',
      ],
    };
  } finally {
    await bot?.kill('SIGTERM');
    await fakes.close();
  }
}
