import { createServer, type IncomingMessage, Server, type ServerResponse } from 'node:http';
import { App, LogLevel, webApi } from '@slack/bolt';
import type { ApprovalCardStore } from '../approvals/ports.js';
import type { Clock } from '../clock.js';
import type { SlackMode } from '../config.js';
import type { SurfaceAdapters } from '../conversations/ports.js';
import type { Logger, LogLevel as OurLevel } from '../logger.js';
import { createGuardedReceiver } from './guarded-receiver.js';
import { createSlackSurface, type SlackSurface } from './slack-surface.js';
import { createUserGroupDirectory } from './user-groups.js';

export interface SlackRuntimeOptions {
  botToken: string;
  mode: SlackMode;
  apiUrl: string;
  port: number;
  logLevel: OurLevel;
  logger: Logger;
  /** The time, for caches (user groups). */
  clock: Clock;
  /** Health of what the bot depends on; /healthz answers 503 while it is false. */
  health: () => { ok: boolean; detail: Record<string, unknown> };
  /** Web API retry policy; tests use none. */
  retryConfig?: webApi.RetryOptions;
}

/** What the core speaks through in Slack. */
export interface SlackAdapters extends SurfaceAdapters {
  surface: SlackSurface;
  /** For what a click does: its own client, which never waits out a rate limit. */
  interactive: SlackSurface;
}

export interface SlackRuntime {
  app: App;
  /** The Slack side of the core, rendering cards from `cards`. */
  adapters(cards: ApprovalCardStore, systemPrompt: string): SlackAdapters;
  /** Starts listening; resolves with the HTTP port actually bound. */
  start(): Promise<{ port: number }>;
  /** Stops intake: no new requests are accepted. */
  stop(): Promise<void>;
  /** Resolves when every listener already running (a click being decided, say) has finished. */
  idle(): Promise<void>;
}

/** Clicks must not wait behind a rate-limited queue: their Web API calls fail fast instead. */
const INTERACTIVE_TIMEOUT_MS = 10_000;

/**
 * What a run posts (answers, cards, notices) is bounded well inside a lease: a call Slack does not answer is
 * given up and left to the delivery outbox, instead of holding the run (or a card owed) past its lease while
 * another process takes it over and posts it too.
 */
const WORK_CALL = { timeout: 8_000, retryConfig: { retries: 1, minTimeout: 1_000, maxTimeout: 2_000 } };

const BOLT_LEVELS: Record<OurLevel, LogLevel> = {
  debug: LogLevel.DEBUG,
  info: LogLevel.INFO,
  warn: LogLevel.WARN,
  error: LogLevel.ERROR,
};

/**
 * The Bolt app in Socket Mode (when an app-level token is configured) or HTTP mode (`POST /slack/events` for
 * events, interactivity and commands), and its Web API clients. `/healthz` is served on `port` in both modes.
 * Listeners are registered separately (register-listeners.ts), once the core exists.
 */
export function createSlackRuntime(options: SlackRuntimeOptions): SlackRuntime {
  const healthz = (_req: IncomingMessage, res: ServerResponse) => {
    const { ok, detail } = options.health();
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ status: ok ? 'ok' : 'unavailable', mode: options.mode.kind, ...detail }));
  };
  const common = {
    token: options.botToken,
    logLevel: BOLT_LEVELS[options.logLevel],
    port: options.port,
    customRoutes: [{ path: '/healthz', method: ['GET'], handler: healthz }],
    clientOptions: {
      slackApiUrl: options.apiUrl,
      ...(options.retryConfig ? { retryConfig: options.retryConfig } : {}),
    },
  };
  const app =
    options.mode.kind === 'socket'
      ? new App({ ...common, appToken: options.mode.appToken, socketMode: true })
      : new App({
          token: common.token,
          clientOptions: common.clientOptions,
          receiver: createGuardedReceiver({
            signingSecret: options.mode.signingSecret,
            endpoint: '/slack/events',
            port: common.port,
            customRoutes: common.customRoutes,
            logLevel: common.logLevel,
            logger: options.logger,
          }),
        });
  // A separate client for what a click does, so a rate-limited queue never holds a decision back.
  const clickClient = new webApi.WebClient(options.botToken, {
    slackApiUrl: options.apiUrl,
    logLevel: common.logLevel,
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
    timeout: INTERACTIVE_TIMEOUT_MS,
  });
  // Runs speak through their own client: bounded calls, and a rate limit is an error the outbox retries later.
  const workClient = new webApi.WebClient(options.botToken, {
    slackApiUrl: options.apiUrl,
    logLevel: common.logLevel,
    rejectRateLimitedCalls: true,
    timeout: WORK_CALL.timeout,
    retryConfig: options.retryConfig ?? WORK_CALL.retryConfig,
  });
  const running = new Set<Promise<void>>();
  app.use(async ({ next }) => {
    const listener = next();
    running.add(listener);
    try {
      await listener;
    } finally {
      running.delete(listener);
    }
  });
  const { logger } = options;
  return {
    app,
    adapters(cards, systemPrompt) {
      const interactive = createSlackSurface(clickClient, { logger, cards });
      return {
        surface: createSlackSurface(workClient, { logger, cards }),
        surfaceKind: 'slack',
        interactive,
        decisionSurface: interactive,
        // Decisions look user groups up before a modal is answered: that lookup must fail fast, never wait.
        groups: createUserGroupDirectory(clickClient, options.clock, logger),
        systemPrompt,
      };
    },
    async start() {
      // In Socket Mode Bolt serves /healthz from a side server that ignores listen errors: check the port first,
      // so a port in use stops start-up as it does in HTTP mode.
      if (options.mode.kind === 'socket' && options.port !== 0) await assertPortFree(options.port);
      const started: unknown = await app.start(options.port);
      // HTTP mode resolves with the listening server; its port matters when `port` was 0.
      const address = started instanceof Server ? started.address() : null;
      return { port: address && typeof address === 'object' ? address.port : options.port };
    },
    stop: () => app.stop().then(() => undefined),
    async idle() {
      await Promise.allSettled([...running]);
    },
  };
}

/** Rejects when nothing can listen on `port` (another process holds it). */
function assertPortFree(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error) => reject(new Error(`PORT ${port} cannot be used: ${error.message}`)));
    probe.listen(port, () => probe.close(() => resolve()));
  });
}
