import { fileURLToPath } from 'node:url';
import { startBotProcess } from '../test/support/bot-process.js';
import type { PreparedRequest } from './load.js';
import { type BenchResult, quantile, type Row, target } from './report.js';
import { clickRequest, pauseThreads, scriptApprovalFlow, startFakes, waitForAnswers } from './rig.js';

export interface ClickAckSize {
  concurrencies: number[];
  /** Clicks measured per concurrency (rounded up to whole rounds). */
  samples: number;
}

/**
 * Click → ack: the HTTP response time of signed `block_actions` requests on distinct pending approvals, sent
 * c at a time from a load generator thread, next to a trivial server measured the same way in the same run.
 */
export async function benchClickAck(size: ClickAckSize): Promise<BenchResult> {
  const fakes = await startFakes();
  const bot = await startBotProcess({ env: fakes.env });
  const floor = await startBotProcess({
    env: {},
    entry: fileURLToPath(new URL('./floor-server.ts', import.meta.url)),
  });
  const url = `${bot.url}/slack/events`;
  try {
    scriptApprovalFlow(fakes.model);
    const rounds = size.concurrencies.map((c) => Math.max(1, Math.ceil(size.samples / c)));
    const warmup = Math.max(...size.concurrencies);
    const needed = warmup + size.concurrencies.reduce((sum, c, i) => sum + c * (rounds[i] ?? 1), 0);
    const cards = await pauseThreads(fakes, url, needed);
    let used = 0;
    let answered = 0;
    const take = (n: number) => {
      const batch = cards.slice(used, used + n);
      used += n;
      return batch;
    };
    const measure = async (n: number) => {
      const clicks = take(n).map((card) => clickRequest(url, card));
      const botTimes = await fakes.load.fire(clicks);
      answered += n;
      await waitForAnswers(fakes, answered);
      const floorTimes = await fakes.load.fire(
        clicks.map((c): PreparedRequest => ({ ...c, url: `${floor.url}/slack/events` })),
      );
      return { botTimes, floorTimes };
    };
    await measure(warmup);
    const rows: Row[] = [];
    const targets = [];
    for (const [i, c] of size.concurrencies.entries()) {
      const bot: number[] = [];
      const floorTimes: number[] = [];
      for (let r = 0; r < (rounds[i] ?? 1); r++) {
        const times = await measure(c);
        bot.push(...times.botTimes);
        floorTimes.push(...times.floorTimes);
      }
      const ratio = quantile(bot, 0.99) / Math.max(quantile(floorTimes, 0.99), 1e-6);
      rows.push({
        case: `${c} concurrent`,
        metrics: {
          clicks: bot.length,
          'bot p50 ms': quantile(bot, 0.5),
          'bot p99 ms': quantile(bot, 0.99),
          'floor p50 ms': quantile(floorTimes, 0.5),
          'floor p99 ms': quantile(floorTimes, 0.99),
          'p99 ratio': ratio,
        },
      });
      targets.push(target(`click ack p99 / floor p99 at ${c} concurrent`, ratio, 1.5, '×'));
    }
    return {
      id: 'click-ack',
      title: 'Click → ack (signed block_actions, HTTP response time)',
      rows,
      targets,
      notes: [
        'each click decides a distinct pending approval; each round waits for the resumed runs to answer before the next',
        'the bot (npm start entry point) and the floor (a Node HTTP server that reads the body and answers 200) each run as their own process; same load generator thread, same requests, same run',
      ],
    };
  } finally {
    await bot.kill('SIGTERM');
    await floor.kill('SIGTERM');
    await fakes.close();
  }
}
