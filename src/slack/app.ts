import { type IncomingMessage, Server, type ServerResponse } from 'node:http';
import { App, type InstallationStore, LogLevel, type webApi } from '@slack/bolt';
import type { ApprovalCardStore } from '../approvals/ports.js';
import type { AdminDirectory } from '../approvals/team-admins.js';
import type { Clock } from '../clock.js';
import type { OAuthInstallConfig, SlackMode } from '../config.js';
import type { Logger, LogLevel as OurLevel } from '../logger.js';
import { eventKey } from './accepted-requests.js';
import { approvalClickIn, type ClickWork } from './clicks/click.js';
import { createGuardedReceiver } from './guarded-receiver.js';
import { oauthReceiverOptions } from './installations/oauth-installer.js';
import type { BotTokens } from './installations/team-clients.js';
import { pageRoutes, type ServedPages } from './page-routes.js';
import type { AcceptedRequests } from './request-guard.js';
import { createSlackAdapters, type SlackAdapters } from './slack-adapters.js';
import { canReceiveEvents, createSlackConnectionMonitor } from './slack-connection.js';
import { slackLibraryLogger } from './slack-logger.js';
import { assertPortFree, createSocketReceiver } from './socket-receiver.js';
import type { SlackIdentity } from './token-check.js';

export interface SlackRuntimeOptions {
  /** The one bot token; unused with `oauth`. */
  botToken: string;
  /**
   * Installs into several workspaces, in either mode: see `oauthReceiverOptions` (installations/oauth-installer.ts)
   * and, in Socket Mode, `createSocketReceiver`.
   */
  oauth?: {
    config: OAuthInstallConfig;
    installations: InstallationStore;
    useStateOnce: (nonce: string) => Promise<boolean>;
  };
  mode: SlackMode;
  apiUrl: string;
  port: number;
  logLevel: OurLevel;
  logger: Logger;
  /** The time, for caches (user groups). */
  clock: Clock;
  /**
   * Health of what the bot depends on; /healthz answers 503 while it is false. `detail` is asked for only when
   * /healthz gives details (HEALTHZ_DETAILS): an unauthenticated caller must not make the bot ask its workers
   * for their memory or read the SIEM lag on every request.
   */
  health: (withDetail: boolean) => Promise<{
    ok: boolean;
    detail?: Record<string, unknown> | undefined;
    /** A sentence said even without details (how to install the app when no workspace has). */
    note?: string | undefined;
  }>;
  /**
   * `/healthz` is unauthenticated: it answers only `{status}` unless details are asked for (HEALTHZ_DETAILS),
   * since they name MCP servers, tools and error texts with hosts and ports.
   */
  healthDetails?: boolean;
  /**
   * HTTP mode: whether Slack's requests can be taken now (the database works); while not, they are answered
   * 503 so Slack delivers them again. Asked for every request: cache the answer.
   */
  available?: () => Promise<boolean>;
  /** Web API retry policy; tests use none. */
  retryConfig?: webApi.RetryOptions;
  /** Socket Mode: how long to wait for a pong, also the step of the reconnect back-off; the client's default. */
  socketPingTimeoutMs?: number;
  /** Who the bot token belongs to, already asked at start-up: Bolt then makes no `auth.test` of its own. */
  identity?: SlackIdentity;
  /**
   * Other pages served on `port` beside Slack's endpoints, in both modes: every method and path under
   * `prefix` goes to `handler` (the web console under `/console`).
   */
  pages?: ServedPages;
}

export interface SlackRuntime {
  app: App;
  /**
   * The Slack side of the core, rendering cards from `cards`, each workspace's calls with its `tokens`; `admins`
   * get direct-message copies of cards whose rule names them and says `notify: dm`.
   */
  adapters(
    cards: ApprovalCardStore,
    systemPrompt: string,
    tokens: BotTokens,
    admins: AdminDirectory,
  ): SlackAdapters;
  /** Starts listening; resolves with the HTTP port actually bound. */
  start(): Promise<{ port: number }>;
  /** Stops intake: no new requests are accepted. */
  stop(): Promise<void>;
  /** Resolves when every listener already running (a click being decided, say) has finished. */
  idle(): Promise<void>;
  /**
   * Where requests are accepted once (`accept`, which rejects when it cannot record one) and Approve clicks go.
   * HTTP mode: every signed request is accepted before it is answered, and Approve clicks are acknowledged once
   * recorded, ahead of Bolt's pipeline, and handed to `clicks`. Socket Mode (no signature: the socket is
   * authenticated): events are accepted once by their id; Bolt's action listener takes the clicks.
   */
  acceptRequests(requests: AcceptedRequests, clicks: ClickWork): void;
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
 * Listeners are registered separately (compose/slack.ts), once the core exists.
 */
export function createSlackRuntime(options: SlackRuntimeOptions): SlackRuntime {
  const connection = createSlackConnectionMonitor(() => options.clock.now());
  const healthz = async (_req: IncomingMessage, res: ServerResponse) => {
    const health = await options.health(options.healthDetails ?? false);
    // Unavailable too while Slack cannot deliver events (a lost Socket Mode connection).
    const slack = connection.current();
    const ok = health.ok && canReceiveEvents(slack);
    res.writeHead(ok ? 200 : 503, { 'content-type': 'application/json' });
    const status = ok ? 'ok' : 'unavailable';
    res.end(
      JSON.stringify(
        options.healthDetails
          ? {
              status,
              mode: options.mode.kind,
              slack: { connection: slack.state, since: new Date(slack.since).toISOString() },
              ...(health.note ? { note: health.note } : {}),
              ...health.detail,
            }
          : { status, ...(health.note ? { note: health.note } : {}) },
      ),
    );
  };
  // Bolt and its Web API clients log through the bot's redacting logger, never with a request's body.
  const boltLogger = slackLibraryLogger(options.logger, options.logLevel, 'bolt');
  const { oauth } = options;
  const common = {
    // OAuth mode: no token of its own; Bolt's `authorize` gives each request its installation's.
    token: oauth ? undefined : options.botToken,
    // Known from start-up's token check: Bolt asks `auth.test` only when it is not given both ids.
    identity: oauth ? {} : (options.identity ?? {}),
    logger: boltLogger,
    logLevel: BOLT_LEVELS[options.logLevel],
    port: options.port,
    customRoutes: [{ path: '/healthz', method: ['GET'], handler: healthz }, ...pageRoutes(options.pages)],
    clientOptions: {
      slackApiUrl: options.apiUrl,
      ...(options.retryConfig ? { retryConfig: options.retryConfig } : {}),
    },
    // Conversation state lives in the database; Bolt's in-memory conversation store would only cost every
    // request a failed look-up (an Error thrown and caught).
    convoStore: false as const,
  };
  /** Where requests are accepted and Approve clicks taken ahead of Bolt go, once the listeners are registered. */
  let acceptance: (AcceptedRequests & { clicks: ClickWork }) | undefined;
  let app: App;
  if (options.mode.kind === 'socket') {
    const receiver = createSocketReceiver({
      appToken: options.mode.appToken,
      port: common.port,
      logger: boltLogger,
      logLevel: common.logLevel,
      customRoutes: common.customRoutes,
      clientOptions: common.clientOptions,
      pingTimeoutMs: options.socketPingTimeoutMs,
      oauth: oauth ? { ...oauth, apiUrl: options.apiUrl, logger: options.logger } : undefined,
    });
    connection.follow(receiver.client);
    app = new App({
      token: common.token,
      ...common.identity,
      logger: common.logger,
      logLevel: common.logLevel,
      clientOptions: common.clientOptions,
      convoStore: common.convoStore,
      receiver,
    });
  } else {
    app = new App({
      token: common.token,
      ...common.identity,
      logger: common.logger,
      logLevel: common.logLevel,
      clientOptions: common.clientOptions,
      convoStore: common.convoStore,
      receiver: createGuardedReceiver({
        signingSecret: options.mode.signingSecret,
        endpoint: '/slack/events',
        port: common.port,
        customRoutes: common.customRoutes,
        logLevel: common.logLevel,
        logger: options.logger,
        boltLogger,
        ...(options.available ? { available: options.available } : {}),
        requests: {
          accept: (request) =>
            acceptance
              ? acceptance.accept(request)
              : Promise.reject(new Error('requests are not taken in yet')),
          forget: (key) => acceptance?.forget(key) ?? Promise.resolve(),
        },
        takeEarly: (body) => (acceptance ? approvalClickIn(body) : undefined),
        handOver: (click, key) => acceptance?.clicks.click(click, key),
        ...(oauth
          ? {
              install: oauthReceiverOptions(oauth.config, {
                apiUrl: options.apiUrl,
                installations: oauth.installations,
                useStateOnce: oauth.useStateOnce,
                logger: options.logger,
              }),
            }
          : {}),
      }),
    });
  }
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
  if (options.mode.kind === 'socket') {
    // Over the socket an event redelivered (same id) is acknowledged by Bolt and goes no further; HTTP requests
    // were accepted once by the request guard already.
    app.use(async ({ body, next }) => {
      const key = body.type === 'event_callback' ? eventKey(body) : undefined;
      if (key !== undefined && acceptance && !(await acceptance.accept({ key }))) {
        logger.warn('repeated event ignored', { key });
        return;
      }
      await next();
    });
  }
  /** The HTTP server (HTTP mode), once listening. */
  let server: Server | undefined;
  let stopping = false;
  return {
    app,
    adapters: (cards, systemPrompt, tokens, admins) =>
      createSlackAdapters({
        tokens,
        apiUrl: options.apiUrl,
        logLevel: options.logLevel,
        ...(options.retryConfig ? { retryConfig: options.retryConfig } : {}),
        cards,
        clock: options.clock,
        logger,
        systemPrompt,
        admins,
      }),
    async start() {
      // In Socket Mode Bolt serves /healthz from a side server that ignores listen errors: check the port first,
      // so a port in use stops start-up as it does in HTTP mode.
      if (options.mode.kind === 'socket' && options.port !== 0) await assertPortFree(options.port);
      const started: unknown = await app.start(options.port);
      // HTTP mode resolves with the listening server; its port matters when `port` was 0.
      if (options.mode.kind === 'http') connection.listening();
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
    acceptRequests(requests, clicks) {
      acceptance = { ...requests, clicks };
    },
  };
}
