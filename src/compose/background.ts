import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ApprovalScheduler, DEFAULT_SCHEDULER_INTERVAL_MS } from '../approvals/approval-scheduler.js';
import { AuditPusher } from '../audit/audit-push.js';
import { Checkpointer } from '../audit/checkpointer.js';
import { yieldToIntake } from '../audit/retention.js';
import type { Config } from '../config.js';
import { localWork } from '../conversations/run-work.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createApprovalNotifier } from '../slack/approval-notifier.js';
import { startClickPickup } from '../slack/clicks/click-pickup.js';
import type { SlackClients } from '../slack/installations/team-clients.js';
import type { Core } from './core.js';
import { clickDeps, type SlackCore } from './slack.js';

/** Slack retries a delivery within minutes; keys of handled deliveries are kept a day. */
const DEDUPE_KEEP_MS = 86_400_000;

export interface BackgroundTimings {
  /** How often approval deadlines (expiry, reminders) are checked. */
  schedulerIntervalMs?: number;
  /** How often runs, queues and deliveries left by stopped processes are looked for; default a third of the lease. */
  recoveryIntervalMs?: number;
  /** The delivery retry interval; recovery runs at least this often. */
  deliveryRetryMs?: number;
  /** How often checkpoints due are signed and unposted ones posted (AUDIT_SIGNING_KEY); default a minute. */
  checkpointIntervalMs?: number;
  /** How often the chain is looked at for a hundredth event not yet signed; default a second. */
  checkpointWatchMs?: number;
  /** How often content past RETENTION_DAYS is removed; default a day. */
  retentionIntervalMs?: number;
}

const DAY_MS = 86_400_000;

/** The cursor-table row whose lease lets one process at a time prune. */
const RETENTION_SINK = 'retention';

export interface BackgroundWork {
  /** Checks approval deadlines now (the scheduler also does on its own interval). */
  checkDeadlines(): Promise<void>;
  /** Stops the timers and waits for what they started. */
  stop(): Promise<void>;
  /**
   * The last of it, once the work in flight has ended and before the database closes: signs the checkpoints
   * due and one at the head (AUDIT_SIGNING_KEY), so the events written before a graceful stop are covered.
   */
  finish(): Promise<void>;
}

/**
 * What a bot process does besides answering Slack: acts on approval deadlines, takes over what stopped
 * processes left (runs, queued messages, cards and replies owed), and forgets old delivery keys. Starts with a
 * recovery and a deadline check at once, so what happened while the bot was down is handled first. With
 * AUDIT_WEBHOOK_URL, also pushes the audit log to the SIEM (on its own timers: never in a request or a run).
 */
export async function startBackgroundWork(
  core: SlackCore,
  config: Pick<Config, 'runLeaseMs' | 'audit'>,
  logger: Logger,
  timings: BackgroundTimings = {},
): Promise<BackgroundWork> {
  const { conversations, stores, clock } = core;
  const scheduler = new ApprovalScheduler({
    store: stores.timers,
    surface: 'slack',
    events: createApprovalNotifier({
      clients: core.adapters.clients,
      followUp: core.followUp,
      admins: core.deciders,
      cards: core.adapters.surface,
    }),
    clock,
    logger,
    intervalMs: timings.schedulerIntervalMs ?? DEFAULT_SCHEDULER_INTERVAL_MS,
  });
  // One recovery at a time: a slow one (Slack down, many runs) is not joined by the next tick.
  let recovering: Promise<void> | undefined;
  const recover = () => {
    recovering ??= conversations
      .recover()
      .catch((error: unknown) => {
        logger.error('recovery failed', { error: describeError(error) });
      })
      .finally(() => {
        recovering = undefined;
      });
    return recovering;
  };
  const pruneDedupe = () =>
    stores.dedupe.prune(clock.now() - DEDUPE_KEEP_MS).catch((error: unknown) => {
      logger.warn('pruning handled deliveries failed', { error: describeError(error) });
    });
  // Recovery drives whole runs (model calls included): it must not hold back start-up or signal handling.
  void recover();
  await scheduler.start();
  const recoveryMs =
    timings.recoveryIntervalMs ?? Math.min(config.runLeaseMs / 3, timings.deliveryRetryMs ?? 30_000);
  const timers = [setInterval(recover, recoveryMs), setInterval(pruneDedupe, 3_600_000)];
  for (const timer of timers) timer.unref();
  const pusher = config.audit.webhook
    ? new AuditPusher({
        store: stores.auditPush,
        webhook: config.audit.webhook,
        clock,
        logger,
        // Retries stay within the cursor's lease, so a failing SIEM does not move the pushing between processes.
        retryMaxMs: Math.min(30_000, config.runLeaseMs / 2),
      })
    : undefined;
  pusher?.start();
  // Clicks acknowledged by a process that died before deciding them, as often as runs are looked for.
  const clicks = startClickPickup(
    {
      ...clickDeps(core, localWork(conversations, core.followUp, logger), logger),
      ledger: stores.requests,
      clock,
    },
    recoveryMs,
  );
  const retention = config.audit.retentionDays
    ? startRetention(core, config.audit.retentionDays, logger, timings.retentionIntervalMs ?? DAY_MS)
    : undefined;
  const checkpointer = config.audit.signingKeyFile
    ? startCheckpoints(core, core.adapters.clients, config.audit, logger, {
        intervalMs: timings.checkpointIntervalMs ?? 60_000,
        watchMs: timings.checkpointWatchMs ?? 1_000,
      })
    : undefined;
  return {
    checkDeadlines: () => scheduler.tick(),
    async stop() {
      await scheduler.stop();
      for (const timer of timers) clearInterval(timer);
      await clicks.stop();
      await pusher?.stop();
      await checkpointer?.stop();
      await retention?.stop();
    },
    async finish() {
      await checkpointer?.finish();
    },
  };
}

/**
 * Signs checkpoints of the audit chain now, then every `intervalMs` (the hour rule, posts to retry), and as
 * soon as a hundredth event is written by any thread or process: the chain is looked at every `watchMs` (one
 * cheap read). One signing at a time. `finish` signs what is due and the head, then gives up the lease.
 */
function startCheckpoints(
  core: Core,
  clients: SlackClients,
  audit: Config['audit'],
  logger: Logger,
  { intervalMs, watchMs }: { intervalMs: number; watchMs: number },
): { stop(): Promise<void>; finish(): Promise<void> } {
  const channel = audit.checkpointChannel;
  const checkpointer = new Checkpointer({
    store: core.stores.checkpoints,
    leases: core.stores.auditPush,
    privateKey: createPrivateKey(readFileSync(audit.signingKeyFile ?? '', 'utf8')),
    clock: core.clock,
    logger,
    ...(channel
      ? {
          // In the channel's own workspace (named with it when installed into several).
          post: async (text: string) => {
            const client = clients.forTeam(channel.teamId);
            const posted = await client.chat.postMessage({ channel: channel.channelId, text });
            return { channel: posted.channel ?? channel.channelId, ts: posted.ts ?? '' };
          },
        }
      : {}),
  });
  let running: Promise<unknown> | undefined;
  const once = (work: () => Promise<unknown>) => {
    running ??= work()
      .catch((error: unknown) =>
        logger.warn('signing audit checkpoints failed', { error: describeError(error) }),
      )
      .finally(() => {
        running = undefined;
      });
    return running;
  };
  const tick = () => once(() => checkpointer.tick());
  const watch = () =>
    once(async () => {
      if (await checkpointer.due()) await checkpointer.tick();
    });
  void tick();
  const timers = [setInterval(tick, intervalMs), setInterval(watch, watchMs)];
  for (const timer of timers) timer.unref();
  return {
    async stop() {
      for (const timer of timers) clearInterval(timer);
      await running;
    },
    async finish() {
      await running;
      await once(() => checkpointer.tick({ head: true }));
      await checkpointer.stop();
    },
  };
}

/** Removes content older than `days` now and then every `intervalMs`, one process at a time. */
function startRetention(
  core: Core,
  days: number,
  logger: Logger,
  intervalMs: number,
): { stop(): Promise<void> } {
  const { stores, clock } = core;
  const prune = async () => {
    if (!(await stores.auditPush.claim(RETENTION_SINK))) return;
    try {
      const now = clock.now();
      const report = await stores.retention.prune(
        now - days * DAY_MS,
        { at: now, limit: `RETENTION_DAYS=${days}` },
        yieldToIntake,
      );
      logger.info('retention: old content removed', { ...report });
    } finally {
      await stores.auditPush.release(RETENTION_SINK);
    }
  };
  return repeat(prune, intervalMs, (error) =>
    logger.warn('retention failed', { error: describeError(error) }),
  );
}

/**
 * Runs `work` now and then every `intervalMs`, one run at a time (a tick while one runs is skipped); a failure
 * goes to `failed`. `stop` clears the timer and waits for the run in progress.
 */
function repeat(
  work: () => Promise<unknown>,
  intervalMs: number,
  failed: (error: unknown) => void,
): { stop(): Promise<void> } {
  let running: Promise<unknown> | undefined;
  const run = () => {
    running ??= work()
      .catch(failed)
      .finally(() => {
        running = undefined;
      });
  };
  run();
  const timer = setInterval(run, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
