import type { webApi } from '@slack/bolt';
import { ApprovalScheduler, DEFAULT_SCHEDULER_INTERVAL_MS } from './approvals/approval-scheduler.js';
import type { ApprovalPolicy } from './approvals/policy.js';
import { auditEvent } from './audit/audit-event.js';
import type { Config } from './config.js';
import type { ConversationService } from './conversations/conversation-service.js';
import { type Core, type CoreOverrides, createCore } from './core.js';
import { describeError } from './errors.js';
import type { Logger } from './logger.js';
import { createSlackRuntime, type SlackAdapters } from './slack/app.js';
import { createApprovalNotifier } from './slack/approval-notifier.js';
import { registerListeners } from './slack/register-listeners.js';

export const SYSTEM_PROMPT = [
  'You are a helpful assistant in a Slack workspace, with tools.',
  'Some tools need a human approval before they run; when you call one, the people in the thread are asked.',
  'If a tool output says the call was not approved or expired, do not call it again unless asked; tell the user.',
  'Answer concisely in Markdown (**bold**, _italic_, `code`, lists). Keep user mentions such as <@U123> exactly as written.',
].join(' ');

export interface BotOverrides extends CoreOverrides {
  retryConfig?: webApi.RetryOptions;
  /** How often approval deadlines (expiry, reminders) are checked. */
  schedulerIntervalMs?: number;
  /** How often runs, queues and deliveries left by stopped processes are looked for; default a third of the lease. */
  recoveryIntervalMs?: number;
}

export interface Bot {
  start(): Promise<{ port: number }>;
  /** Stops intake, lets in-flight work finish (bounded), closes the database. */
  stop(graceMs?: number): Promise<void>;
  conversations: ConversationService;
  /** Checks approval deadlines now (the scheduler also does on its own interval). */
  checkDeadlines(): Promise<void>;
}

/** Slack retries a delivery within minutes; keys of handled deliveries are kept a day. */
const DEDUPE_KEEP_MS = 86_400_000;

/**
 * The composition root shared by `npm start` and the end-to-end tests, in three steps: the Slack runtime
 * (Bolt app and clients), the core on its database (stores, model, policy, services), and the listeners.
 * Then the background work every process does: deadlines, and taking over what stopped processes left.
 */
export async function createBot(
  config: Config,
  logger: Logger,
  policy: ApprovalPolicy,
  overrides: BotOverrides = {},
): Promise<Bot> {
  let core: Core<SlackAdapters> | undefined;
  const runtime = createSlackRuntime({
    botToken: config.slack.botToken,
    mode: config.slack.mode,
    apiUrl: config.slack.apiUrl,
    port: config.port,
    logLevel: config.logLevel,
    logger,
    clock: overrides.clock ?? { now: () => Date.now() },
    health: () => ({
      ok: core?.database.isOpen() ?? false,
      detail: {
        database: core?.database.isOpen() ? 'ok' : 'closed',
        ...(config.mcpServersFile && core ? { mcp: core.mcp.status() } : {}),
      },
    }),
    ...(overrides.retryConfig ? { retryConfig: overrides.retryConfig } : {}),
  });
  core = await createCore(
    config,
    logger,
    policy,
    (stores) => runtime.adapters(stores.cards, SYSTEM_PROMPT),
    overrides,
  );
  const { conversations, stores, followUp } = core;
  registerListeners(runtime, core, config, logger);
  const scheduler = new ApprovalScheduler({
    store: stores.timers,
    surface: 'slack',
    events: createApprovalNotifier({
      client: runtime.app.client,
      followUp,
      adminUserIds: config.adminUserIds,
    }),
    clock: core.clock,
    logger,
    intervalMs: overrides.schedulerIntervalMs ?? DEFAULT_SCHEDULER_INTERVAL_MS,
  });
  const started = core;
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
    stores.dedupe.prune(started.clock.now() - DEDUPE_KEEP_MS).catch((error: unknown) => {
      logger.warn('pruning handled deliveries failed', { error: describeError(error) });
    });
  const timers: NodeJS.Timeout[] = [];
  return {
    conversations,
    checkDeadlines: () => scheduler.tick(),
    async start() {
      await stores.approvals.recordAudit([
        auditEvent('policy.loaded', { at: started.clock.now(), payload: { summary: policy.summary } }),
      ]);
      // Before recovery: a run resumed at start-up must find the MCP tools it paused on.
      await started.mcp.connectAll();
      const listening = await runtime.start();
      // Recovery drives whole runs (model calls included): it must not hold back start-up or signal handling.
      void recover();
      // Handles at once what expired while the process was down, then checks on its interval.
      await scheduler.start();
      const recoveryMs =
        overrides.recoveryIntervalMs ?? Math.min(config.runLeaseMs / 3, overrides.deliveryRetryMs ?? 30_000);
      timers.push(setInterval(recover, recoveryMs));
      timers.push(setInterval(pruneDedupe, 3_600_000));
      for (const timer of timers) timer.unref();
      return listening;
    },
    async stop(graceMs = 10_000) {
      await scheduler.stop();
      for (const timer of timers) clearInterval(timer);
      await runtime.stop();
      const finished = (async () => {
        await runtime.idle();
        await conversations.idle();
      })();
      await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
      await started.mcp.close();
      await started.database.close();
    },
  };
}
