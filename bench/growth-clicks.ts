import { ApprovalService } from '../src/approvals/approval-service.js';
import { Deciders } from '../src/approvals/deciders.js';
import type { DatabaseConfig } from '../src/config.js';
import { createApprovalStore } from '../src/db/approval-store.js';
import { openDatabase } from '../src/db/open-database.js';
import { silentLogger } from '../src/logger.js';
import { startBotProcess } from '../test/support/bot-process.js';
import { type CommandRun, databaseEnv } from './growth-cli.js';
import { quantile } from './report.js';
import { clickRequest, type Fakes, pauseThreads, waitForAnswers } from './rig.js';
import { storeContext } from './store-fixture.js';

/** Click → ack on a bot started on the database: quiet, and (when `during` is given) while it runs. */
export interface ClickFigures {
  quietP50: number;
  quietP99: number;
  clicks: number;
  /** While `during` ran: p99 and the clicks sent then (at least one round). */
  duringP99?: number;
  duringClicks?: number;
  /** What `during` gave back (the prune's run). */
  duringRun?: CommandRun;
}

/**
 * Starts the bot (`npm start`'s entry) on the database, pauses threads on approvals, then sends `concurrency`
 * signed Approve clicks at once for `rounds` rounds, each waiting for the resumed runs; then starts `during`
 * and keeps sending rounds (up to `rounds` more) until it is done.
 */
export async function measureClicks(
  fakes: Fakes,
  where: DatabaseConfig,
  concurrency: number,
  rounds: number,
  answered: { count: number },
  during?: () => Promise<CommandRun>,
): Promise<ClickFigures> {
  const { DATABASE_PATH: _ownFile, ...env } = fakes.env;
  const bot = await startBotProcess({ env: { ...env, ...databaseEnv(where) }, readyTimeoutMs: 120_000 });
  try {
    const url = `${bot.url}/slack/events`;
    const cards = await pauseThreads(fakes, url, concurrency * (1 + rounds * (during ? 2 : 1)));
    let used = 0;
    const round = async () => {
      const clicks = cards.slice(used, used + concurrency).map((card) => clickRequest(url, card));
      used += concurrency;
      const times = await fakes.load.fire(clicks);
      answered.count += clicks.length;
      await waitForAnswers(fakes, answered.count);
      return times;
    };
    await round();
    const quiet: number[] = [];
    for (let r = 0; r < rounds; r++) quiet.push(...(await round()));
    const figures: ClickFigures = {
      quietP50: quantile(quiet, 0.5),
      quietP99: quantile(quiet, 0.99),
      clicks: quiet.length,
    };
    if (!during) return figures;
    let finished: CommandRun | undefined;
    const running = during().then((run) => {
      finished = run;
      return run;
    });
    const busy: number[] = [];
    for (let r = 0; r < rounds && (r === 0 || !finished); r++) busy.push(...(await round()));
    return {
      ...figures,
      duringP99: quantile(busy, 0.99),
      duringClicks: busy.length,
      duringRun: await running,
    };
  } catch (error) {
    const said = bot.output().slice(-3000);
    throw new Error(`${String(error)}; the bot's last output:\n${said}`, { cause: error });
  } finally {
    await bot.kill('SIGTERM');
  }
}

/**
 * Decisions per second through the approval service (one writer, one decision at a time), on the seeded
 * pending requests given: what a click's worker does with the database.
 */
export async function decisionsPerSecond(where: DatabaseConfig, approvalIds: readonly string[]) {
  const ctx = storeContext(await openDatabase(where, silentLogger));
  try {
    const store = createApprovalStore(ctx);
    const service = new ApprovalService({
      store,
      clock: ctx.clock,
      deciders: new Deciders({ clock: ctx.clock, adminUserIds: ['UDEC0'] }),
    });
    let decided = 0;
    const started = performance.now();
    for (const approvalId of approvalIds) {
      const approval = await store.get(approvalId);
      const result = await service.decide({
        approvalId,
        userId: 'UDEC0',
        teamId: 'T1',
        channelId: approval?.channelId ?? undefined,
        vote: 'approve',
        reason: null,
      });
      if (result.ok && result.kind === 'decided') decided += 1;
    }
    return { decided, perSecond: decided / ((performance.now() - started) / 1000) };
  } finally {
    await ctx.db.close();
  }
}
