import { createServer, type IncomingMessage, Server, type ServerResponse } from 'node:http';
import { App, LogLevel, type webApi } from '@slack/bolt';
import type { ApprovalCardStore } from '../approvals/ports.js';
import type { Clock } from '../clock.js';
import type { SlackMode } from '../config.js';
import type { Logger, LogLevel as OurLevel } from '../logger.js';
import { createGuardedReceiver } from './guarded-receiver.js';
import { createSlackAdapters, type SlackAdapters } from './slack-adapters.js';

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
  health: () => Promise<{ ok: boolean; detail: Record<string, unknown> }>;
  /** Web API retry policy; tests use none. */
  retryConfig?: webApi.RetryOptions;
  /** Admins, who get direct-message copies of cards whose rule says `notify: dm`. */
  adminUserIds?: readonly string[];
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
  const healthz = async (_req: IncomingMessage, res: ServerResponse) => {
    const { ok, detail } = await options.health();
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
    // Conversation state lives in the database; Bolt's in-memory conversation store would only cost every
    // request a failed look-up (an Error thrown and caught).
    convoStore: false as const,
  };
  const app =
    options.mode.kind === 'socket'
      ? new App({ ...common, appToken: options.mode.appToken, socketMode: true })
      : new App({
          token: common.token,
          clientOptions: common.clientOptions,
          convoStore: common.convoStore,
          receiver: createGuardedReceiver({
            signingSecret: options.mode.signingSecret,
            endpoint: '/slack/events',
            port: common.port,
            customRoutes: common.customRoutes,
            logLevel: common.logLevel,
            logger: options.logger,
          }),
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
  /** The HTTP server (HTTP mode), once listening. */
  let server: Server | undefined;
  let stopping = false;
  return {
    app,
    adapters: (cards, systemPrompt) =>
      createSlackAdapters({
        botToken: options.botToken,
        apiUrl: options.apiUrl,
        logLevel: options.logLevel,
        ...(options.retryConfig ? { retryConfig: options.retryConfig } : {}),
        cards,
        clock: options.clock,
        logger,
        systemPrompt,
        ...(options.adminUserIds ? { adminUserIds: options.adminUserIds } : {}),
      }),
    async start() {
      // In Socket Mode Bolt serves /healthz from a side server that ignores listen errors: check the port first,
      // so a port in use stops start-up as it does in HTTP mode.
      if (options.mode.kind === 'socket' && options.port !== 0) await assertPortFree(options.port);
      const started: unknown = await app.start(options.port);
      // HTTP mode resolves with the listening server; its port matters when `port` was 0.
      if (started instanceof Server) {
        server = started;
        // Once stopping, every answer closes its connection, so no client keeps sending on a kept-alive one.
        server.prependListener('request', (_req: IncomingMessage, res: ServerResponse) => {
          if (stopping) res.shouldKeepAlive = false;
        });
      }
      const address = server?.address();
      return { port: address && typeof address === 'object' ? address.port : options.port };
    },
    async stop() {
      stopping = true;
      const stopped = app.stop();
      // The server stops listening at once but only closes when its connections have ended: close each one
      // as soon as it is idle (a request in flight is answered first), or a client polling on a kept-alive
      // connection would still be served and keep the process from stopping.
      server?.closeIdleConnections();
      const sweep = setInterval(() => server?.closeIdleConnections(), 25);
      try {
        await stopped;
      } finally {
        clearInterval(sweep);
      }
    },
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
