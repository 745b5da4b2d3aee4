import { LogLevel, type RetryOptions } from '@slack/web-api';
import { Deciders } from '../approvals/deciders.js';
import type { ApprovalCardStore } from '../approvals/ports.js';
import type { AdminDirectory } from '../approvals/team-admins.js';
import type { Clock } from '../clock.js';
import type { SurfaceAdapters } from '../conversations/surface-ports.js';
import type { Logger, LogLevel as OurLevel } from '../logger.js';
import { createChannelMembership } from './channel-members.js';
import { type BotTokens, createSlackClients, type SlackClients } from './installations/team-clients.js';
import { createOrganisationDirectory } from './organisation-members.js';
import { slackLibraryLogger } from './slack-logger.js';
import { createSlackSurface, type SlackSurface } from './slack-surface.js';
import { createTeamSurface } from './team-surface.js';
import { createUserGroupDirectory } from './user-groups.js';

/** Clicks must not wait behind a rate-limited queue: their Web API calls fail fast instead. */
const INTERACTIVE_TIMEOUT_MS = 10_000;

/**
 * What a run posts (answers, cards, notices) is bounded well inside a lease: a call Slack does not answer is
 * given up and left to the delivery outbox, instead of holding the run (or a card owed) past its lease while
 * another process takes it over and posts it too.
 */
const WORK_CALL = { timeout: 8_000, retryConfig: { retries: 1, minTimeout: 1_000, maxTimeout: 2_000 } };

export const WEB_API_LEVELS: Record<OurLevel, LogLevel> = {
  debug: LogLevel.DEBUG,
  info: LogLevel.INFO,
  warn: LogLevel.WARN,
  error: LogLevel.ERROR,
};

export interface SlackClientOptions {
  /** SLACK_BOT_TOKEN, or each workspace's installation. */
  tokens: BotTokens;
  apiUrl: string;
  logLevel: OurLevel;
  /** Web API retry policy; tests use none. */
  retryConfig?: RetryOptions;
}

/** What the core speaks through in Slack. */
export interface SlackAdapters extends SurfaceAdapters {
  surface: SlackSurface;
  /** For what a click does: its own client, which never waits out a rate limit. */
  interactive: SlackSurface;
  /**
   * Each workspace's client for what is neither a run nor a click's reply (App Home, direct messages, reminders,
   * checkpoints): Bolt's own options, waiting out a rate limit as Bolt's client does.
   */
  clients: SlackClients;
}

/**
 * The Slack side of the core, rendering cards from `cards`: the surface runs speak through (bounded calls, a
 * rate limit is an error the outbox retries later) and the one for what a click does (never waits out a rate
 * limit). Built from the Web API alone, so a worker thread that drives runs needs no Bolt app.
 */
export function createSlackAdapters(
  options: SlackClientOptions & {
    cards: ApprovalCardStore;
    clock: Clock;
    logger: Logger;
    systemPrompt: string;
    /** Each workspace's admins: who gets direct-message copies of cards naming admins (`notify: dm`). */
    admins?: AdminDirectory;
  },
): SlackAdapters {
  const { logger, cards } = options;
  // Each workspace's calls go out with its own token (one client per workspace, or the one token's).
  const clients = (extra: {
    timeout?: number;
    retryConfig?: RetryOptions;
    rejectRateLimitedCalls?: boolean;
  }) =>
    createSlackClients(
      options.tokens,
      {
        slackApiUrl: options.apiUrl,
        logger: slackLibraryLogger(logger, options.logLevel, 'web-api'),
        logLevel: WEB_API_LEVELS[options.logLevel],
        ...extra,
      },
      logger,
    );
  const clickClients = clients({
    timeout: INTERACTIVE_TIMEOUT_MS,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
  });
  const workClients = clients({
    timeout: WORK_CALL.timeout,
    retryConfig: options.retryConfig ?? WORK_CALL.retryConfig,
    rejectRateLimitedCalls: true,
  });
  // Decisions look user groups up before a modal is answered: that lookup must fail fast, never wait. Each
  // workspace's groups and channels are asked of that workspace.
  const groups = createUserGroupDirectory(clickClients, options.clock, logger);
  // Whom cards are sent to directly: the core's rules over this surface's user groups.
  const deciders = new Deciders({ clock: options.clock, admins: options.admins, groups });
  const interactive = createTeamSurface(clickClients, (client) =>
    createSlackSurface(client, { logger, cards, deciders }),
  );
  // Cards are posted once by the client: after a post whose outcome is unknown the surface looks in the thread
  // before it posts again (a client retry would post the card twice).
  const onceClients = clients({
    timeout: WORK_CALL.timeout,
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
  });
  return {
    surface: createTeamSurface(workClients, (client, team) =>
      createSlackSurface(client, {
        logger,
        cards,
        deciders,
        once: onceClients.forTeam(team.teamId, team.enterpriseId),
      }),
    ),
    surfaceKind: 'slack',
    interactive,
    decisionSurface: interactive,
    groups,
    // Who may stop a thread's work: looked up like a click's, failing fast.
    channelMembers: createChannelMembership(clickClients, options.clock, logger),
    // Installs into several workspaces: the organisation a click names is checked against its workspace's
    // installation. With one token, one install serves one workspace or organisation: as Slack named it.
    ...(options.tokens.kind === 'installations'
      ? { organisations: createOrganisationDirectory(clickClients, options.clock, logger) }
      : {}),
    systemPrompt: options.systemPrompt,
    clients: clients(options.retryConfig ? { retryConfig: options.retryConfig } : {}),
  };
}
