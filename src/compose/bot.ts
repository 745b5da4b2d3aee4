import type { IncomingMessage, ServerResponse } from 'node:http';
import type { webApi } from '@slack/bolt';
import { type ApprovalPolicy, ReloadablePolicy } from '../approvals/policy.js';
import { workspacesLeft } from '../approvals/removed-workspaces.js';
import { expireRemovedWorkspace } from '../approvals/workspace-removal.js';
import { auditEvent } from '../audit/audit-event.js';
import { pushLag, WEBHOOK_SINK } from '../audit/audit-push.js';
import type { Config } from '../config.js';
import { type ConversationService, HAND_OVER_STEP_MS } from '../conversations/conversation-service.js';
import { dropRemovedWorkspace } from '../conversations/dropped-deliveries.js';
import { localWork, type RunWork } from '../conversations/run-work.js';
import { createDatabaseHealth, type DatabaseHealth } from '../db/database-health.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createSlackRuntime } from '../slack/app.js';
import { authTest, createInstallationHealth } from '../slack/installations/installation-health.js';
import type { SealedInstallations } from '../slack/installations/installation-store.js';
import { registerUninstallListeners } from '../slack/listeners/uninstall.js';
import type { SlackAdapters } from '../slack/slack-adapters.js';
import { SYSTEM_PROMPT } from '../slack/system-prompt.js';
import type { SlackIdentity } from '../slack/token-check.js';
import { threadMemory } from '../workers/protocol.js';
import { startWorkerPool, type WorkerPool } from '../workers/worker-pool.js';
import { type BackgroundTimings, type BackgroundWork, startBackgroundWork } from './background.js';
import { consoleSlack, createConsole } from './console.js';
import { type Core, type CoreOverrides, createCore } from './core.js';
import { adminsOf, botTokensOf, installationsOf, lateInstallations } from './installations.js';
import { registerListeners } from './slack.js';

export interface BotOverrides extends CoreOverrides, BackgroundTimings {
  retryConfig?: webApi.RetryOptions;
  /** Socket Mode: how long to wait for a pong, also the step of the reconnect back-off; default 5 s. */
  socketPingTimeoutMs?: number;
  /** Who the bot token belongs to, when start-up already asked Slack: Bolt then skips its own `auth.test`. */
  slackIdentity?: SlackIdentity;
  /** The policy file's text `policy` was validated from: worker threads build theirs from it, not the file. */
  policyText?: string;
  /** Installed into several workspaces: how long `/healthz` answers from its last look at their tokens. */
  installationCheckMs?: number;
}

export interface Bot {
  start(): Promise<{ port: number }>;
  /** Stops intake, lets in-flight work finish (bounded), closes the database. */
  stop(graceMs?: number): Promise<void>;
  /** This thread's conversation service (with `WORKERS=0`, every run's). */
  conversations: ConversationService;
  /** Checks approval deadlines now (the scheduler also does on its own interval). */
  checkDeadlines(): Promise<void>;
  /**
   * Puts a validated policy in force for the calls planned from now on, in this thread and every worker
   * (`text` is the file's text they build it from), recorded as `policy.loaded`. Waiting requests keep the rule
   * stored with them.
   */
  reloadPolicy(policy: ApprovalPolicy, text: string): Promise<void>;
}

/**
 * The composition root shared by `npm start` and the end-to-end tests, in three steps: the Slack runtime
 * (Bolt app and clients), the core on its database (stores, model, policy, services), and the listeners.
 * Then where the work after each request happens: worker threads (`WORKERS`, each with its own connections, one
 * of them also checking deadlines and taking over what stopped processes left), or this thread.
 */
export async function createBot(
  config: Config,
  logger: Logger,
  policy: ApprovalPolicy,
  overrides: BotOverrides = {},
): Promise<Bot> {
  let core: Core<SlackAdapters> | undefined;
  const inForce = new ReloadablePolicy(policy);
  let pool: WorkerPool | undefined;
  let databaseHealth: DatabaseHealth | undefined;
  /** The web console, once the core it stands on exists. */
  let consolePages: ((req: IncomingMessage, res: ServerResponse) => unknown) | undefined;
  const clock = overrides.clock ?? { now: () => Date.now() };
  /** OAuth mode: the stored installations, once the database is open, and whether their tokens work. */
  let installations: SealedInstallations | undefined;
  let installationHealth: ReturnType<typeof createInstallationHealth> | undefined;
  const database = async () => (await databaseHealth?.check()) ?? { ok: false as const, problem: 'opening' };
  const runtime = createSlackRuntime({
    botToken: config.slack.botToken,
    mode: config.slack.mode,
    apiUrl: config.slack.apiUrl,
    port: config.port,
    logLevel: config.logLevel,
    logger,
    clock,
    ...(config.slack.oauth
      ? {
          oauth: {
            config: config.slack.oauth,
            installations: lateInstallations(() => installations),
            // An install's state is used once, in every process: recorded like a signed request.
            useStateOnce: async (nonce: string) =>
              (await core?.stores.requests.accept([{ key: `install-state:${nonce}` }]))?.[0] === true,
          },
        }
      : {}),
    health: async (withDetail) => {
      const db = await database();
      // Installed into several workspaces: healthy while one installation's token works.
      const slack = await installationHealth?.check();
      return {
        ok: db.ok && (slack?.ok ?? true),
        note: slack?.note,
        detail: withDetail
          ? {
              ...(await healthDetail(db.ok ? 'ok' : db.problem)),
              ...(slack ? { installations: { installed: slack.installed, refused: slack.refused } } : {}),
            }
          : undefined,
      };
    },
    available: async () => (await database()).ok,
    healthDetails: config.healthzDetails,
    pages: {
      prefix: '/console',
      handler: (req, res) => {
        if (consolePages) void consolePages(req, res);
        else res.writeHead(503, { 'retry-after': '1' }).end('Starting');
      },
    },
    ...(overrides.retryConfig ? { retryConfig: overrides.retryConfig } : {}),
    ...(overrides.socketPingTimeoutMs ? { socketPingTimeoutMs: overrides.socketPingTimeoutMs } : {}),
    ...(overrides.slackIdentity ? { identity: overrides.slackIdentity } : {}),
  });
  /** What `/healthz` adds with HEALTHZ_DETAILS: the database's state, workers, MCP servers, SIEM lag, memory. */
  const healthDetail = async (database: string): Promise<Record<string, unknown>> => ({
    database,
    ...(pool ? { workers: pool.running() } : {}),
    ...(config.mcpServersFile && core ? { mcp: core.mcp.status() } : {}),
    ...(config.audit.webhook && core?.database.isOpen() ? { auditWebhook: await webhookLag(core) } : {}),
    memory: {
      rss: Math.round(process.memoryUsage.rss() / 104_857.6) / 10,
      threads: [threadMemory(), ...((await pool?.memory()) ?? [])],
    },
  });
  core = await createCore(
    config,
    logger,
    inForce,
    (stores) =>
      runtime.adapters(
        stores.cards,
        SYSTEM_PROMPT,
        botTokensOf(config, stores, clock, logger),
        adminsOf(config, stores),
      ),
    overrides,
  );
  installations = installationsOf(config, core.stores, clock, logger);
  const stored = installations;
  installationHealth = stored
    ? createInstallationHealth({
        workspaces: () => stored.workspaces(),
        probe: authTest(config.slack.apiUrl),
        now: () => Date.now(),
        logger,
        ...(overrides.installationCheckMs !== undefined ? { everyMs: overrides.installationCheckMs } : {}),
      })
    : undefined;
  const started = core;
  databaseHealth = createDatabaseHealth(core.database);
  pool =
    config.workers > 0
      ? startWorkerPool(
          config.workers,
          {
            config,
            owner: core.owner,
            ...(overrides.policyText ? { policyText: overrides.policyText } : {}),
          },
          logger,
        )
      : undefined;
  const work: RunWork = pool ?? localWork(core.conversations, core.followUp, logger);
  const home = registerListeners(runtime, core, work, pool, config, logger);
  if (installations)
    registerUninstallListeners(runtime.app, {
      installations,
      // Expired here, followed up where the work runs (the card, the run told, App Home).
      removed: async (removal, reason) => {
        const scope = workspacesLeft(removal, await installations.installs());
        if (!scope) {
          const ids = { teamId: removal.teamId, enterpriseId: removal.enterpriseId };
          if (removal.orgWide || !removal.teamId) logger.warn('an uninstall named no workspace', ids);
          else logger.info("the organisation's install still serves the workspace: nothing there ends", ids);
          return 0;
        }
        const dropped = await dropRemovedWorkspace(started.stores.deliveries, scope, started.clock.now());
        if (dropped > 0)
          logger.warn('deliveries owed to the removed workspace were dropped', { ...scope, dropped });
        const expired = await expireRemovedWorkspace(started.stores.timers, scope, reason, started.clock);
        for (const settled of expired) work.settled({ kind: 'expired', ...settled });
        return expired.length;
      },
      logger,
    });
  // With workers, a worker of its own serves the console: this thread, which acks Slack, only relays its requests.
  consolePages = pool
    ? pool.console
    : createConsole(core, work, consoleSlack(core, installations), config, logger);
  // Without workers, this thread follows decisions up: App Home is refreshed from here.
  if (!pool) core.followUp.watch(home);
  let background: BackgroundWork | undefined;
  return {
    conversations: core.conversations,
    checkDeadlines: () => pool?.checkDeadlines() ?? background?.checkDeadlines() ?? Promise.resolve(),
    async reloadPolicy(next, text) {
      inForce.replace(next);
      pool?.reloadPolicy(text);
      await started.stores.approvals.recordAudit([
        auditEvent('policy.loaded', {
          at: started.clock.now(),
          payload: { summary: next.summary, reloaded: true },
        }),
      ]);
    },
    async start() {
      await started.stores.approvals.recordAudit([
        auditEvent('policy.loaded', { at: started.clock.now(), payload: { summary: policy.summary } }),
      ]);
      // Before recovery: a run resumed at start-up must find the MCP tools it paused on.
      await started.mcp.connectAll();
      const listening = await runtime.start();
      // Handles at once what expired while the process was down; with workers, the first one does this.
      if (!pool) background = await startBackgroundWork(started, config, logger, overrides);
      return listening;
    },
    async stop(graceMs = 10_000) {
      await background?.stop();
      await runtime.stop();
      const finished = (async () => {
        await runtime.idle();
        await started.conversations.idle();
      })();
      await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, graceMs).unref())]);
      await started.conversations.handOver(HAND_OVER_STEP_MS);
      await background?.finish();
      await pool?.stop(graceMs);
      await started.mcp.close();
      await started.database.close();
    },
  };
}

/** How far the SIEM is behind the audit log, for /healthz; a failed read says so rather than failing health. */
async function webhookLag(core: Core): Promise<Record<string, unknown>> {
  try {
    return pushLag(await core.stores.auditPush.state(WEBHOOK_SINK), core.clock.now());
  } catch (error) {
    return { error: describeError(error) };
  }
}
