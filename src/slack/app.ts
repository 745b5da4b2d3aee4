import { createServer, type IncomingMessage, Server, type ServerResponse } from 'node:http';
import { App, LogLevel, webApi } from '@slack/bolt';
import type { ApprovalService } from '../approvals/approval-service.js';
import type { ArgumentEditService } from '../approvals/argument-edit-service.js';
import type { ApprovalCardStore, StandingApprovals } from '../approvals/ports.js';
import type { AuditQueries } from '../audit/audit-queries.js';
import type { SlackMode } from '../config.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import type { DedupeStore } from '../conversations/ports.js';
import type { WelcomeService } from '../conversations/welcome-service.js';
import type { Logger, LogLevel as OurLevel } from '../logger.js';
import { createAuditAccess } from './audit-access.js';
import { createGuardedReceiver } from './guarded-receiver.js';
import { createHomePublisher, type HomePublisher } from './home-publisher.js';
import { registerActionListeners } from './listeners/actions.js';
import { registerCommandListeners } from './listeners/commands.js';
import { registerHomeListeners } from './listeners/home.js';
import { registerMessageListeners } from './listeners/messages.js';
import { registerMessagesTabListener } from './listeners/messages-tab.js';
import { createSlackSurface, type SlackSurface } from './slack-surface.js';

export interface SlackAppOptions {
  botToken: string;
  mode: SlackMode;
  apiUrl: string;
  port: number;
  logLevel: OurLevel;
  logger: Logger;
  /** Health of what the bot depends on; /healthz answers 503 while it is false. */
  health: () => { ok: boolean; detail: Record<string, unknown> };
  /** Web API retry policy; tests use none. */
  retryConfig?: webApi.RetryOptions;
  /** Where approval cards are shown and what they render from (approval-channel copies, fresh updates). */
  cards?: ApprovalCardStore;
  /** Workspace admins and owners may audit too (users.info). */
  auditIncludesWorkspaceAdmins?: boolean;
}

export interface SlackServices {
  conversations: ConversationService;
  approvals: ApprovalService;
  edits: ArgumentEditService;
  dedupe: DedupeStore;
  auditQueries: AuditQueries;
  standing: StandingApprovals;
  /** The Messages tab (greeting, suggested prompts). */
  welcome?: WelcomeService;
}

export interface SlackApp {
  app: App;
  surface: SlackSurface;
  /** App Home views, refreshed by whatever changes a request (decisions here, expiries in the scheduler). */
  home: HomePublisher;
  /** Starts listening; resolves with the HTTP port actually bound. */
  start(): Promise<{ port: number }>;
  /** Stops intake: no new requests are accepted. */
  stop(): Promise<void>;
  /** Resolves when every listener already running (a click being decided, say) has finished. */
  idle(): Promise<void>;
}

/** Clicks must not wait behind a rate-limited queue: their Web API calls fail fast instead. */
const INTERACTIVE_TIMEOUT_MS = 10_000;

const BOLT_LEVELS: Record<OurLevel, LogLevel> = {
  debug: LogLevel.DEBUG,
  info: LogLevel.INFO,
  warn: LogLevel.WARN,
  error: LogLevel.ERROR,
};

/**
 * The Bolt app in Socket Mode (when an app-level token is configured) or HTTP mode (`POST /slack/events` for
 * events, interactivity and commands). `/healthz` is served on `port` in both modes.
 */
export function createSlackApp(
  options: SlackAppOptions,
  services: (surface: SlackSurface, client: App['client']) => SlackServices,
): SlackApp {
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
  const { logger } = options;
  const surfaceOptions = { logger, ...(options.cards ? { cards: options.cards } : {}) };
  const surface = createSlackSurface(app.client, surfaceOptions);
  // A separate client for what a click does, so a rate-limited queue never holds a decision back.
  const clickClient = new webApi.WebClient(options.botToken, {
    slackApiUrl: options.apiUrl,
    logLevel: common.logLevel,
    rejectRateLimitedCalls: true,
    retryConfig: { retries: 0 },
    timeout: INTERACTIVE_TIMEOUT_MS,
  });
  const interactive = createSlackSurface(clickClient, surfaceOptions);
  // Decisions look user groups up before a modal is answered: that lookup must fail fast, never wait.
  const { conversations, approvals, edits, dedupe, welcome, auditQueries, standing } = services(
    surface,
    clickClient,
  );
  const access = createAuditAccess(app.client, {
    isAdmin: (userId) => approvals.isAdmin(userId),
    includeWorkspaceAdmins: options.auditIncludesWorkspaceAdmins ?? false,
    now: Date.now,
    logger,
  });
  const home = createHomePublisher(app.client, { queries: auditQueries, access, logger });
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
  registerMessageListeners(app, { conversations, dedupe, logger });
  registerActionListeners(app, {
    approvals,
    edits,
    conversations,
    surface: interactive,
    logger,
    afterDecision: home.afterDecision,
    directMessage: (userId, text) =>
      app.client.chat.postMessage({ channel: userId, text }).then(() => undefined),
  });
  registerCommandListeners(app, { queries: auditQueries, access, standing, now: Date.now, logger });
  registerHomeListeners(app, { home, logger });
  if (welcome) registerMessagesTabListener(app, { welcome, logger });
  app.error(async (error) => {
    options.logger.error('slack listener error', { error: error.message, code: error.code });
  });
  return {
    app,
    surface,
    home,
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
