import type { IncomingMessage, ServerResponse } from 'node:http';
import { ChainCheck } from '../audit/chain-check.js';
import type { Config } from '../config.js';
import { ConsoleAccess } from '../console/console-access.js';
import type { RunWork } from '../conversations/run-work.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { SealedInstallations } from '../slack/installations/installation-store.js';
import type { SlackClients } from '../slack/installations/team-clients.js';
import { createSlackSignIn } from '../slack/openid-sign-in.js';
import type { SlackAdapters } from '../slack/slack-adapters.js';
import { toolNames } from '../tools/built-in-tools.js';
import { type ConsoleFetch, consoleFetch, consoleRequestListener } from '../web/console-app.js';
import type { ConsoleDeps } from '../web/console-deps.js';
import type { Core } from './core.js';

/**
 * What the console asks of Slack: with one bot token its workspace; installed into several, whether the app is
 * installed in a person's workspace.
 */
export function consoleSlack(
  core: Core<SlackAdapters>,
  installations: Pick<SealedInstallations, 'botToken'> | undefined,
): Parameters<typeof consoleDeps>[2] {
  return {
    clients: core.adapters.clients,
    installed: installations
      ? async (teamId, enterpriseId) => (await installations.botToken(teamId, enterpriseId)) !== undefined
      : undefined,
  };
}

/** The console's access rules on the core's stores: sessions, one-time links, their audit events. */
export function consoleAccess(core: Core): ConsoleAccess {
  const { stores } = core;
  return new ConsoleAccess({
    sessions: stores.consoleSessions,
    links: stores.consoleLinks,
    recordAudit: (events) => stores.approvals.recordAudit(events),
    clock: core.clock,
  });
}

/**
 * The web console on the core (the same deciders, approval service and follow-up as Slack), answering under
 * `/console` of the bot's HTTP server. With one bot token, `clients` asks Slack once which workspace the bot is
 * installed in; installed into several, a person signs in to their own workspace when the app is installed
 * there (`installed`). Sign in with Slack asks Slack's Web API at the same SLACK_API_URL, with no bot token.
 */
export function createConsole(
  ...args: Parameters<typeof consoleDeps>
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return consoleRequestListener(consoleDeps(...args));
}

/** The same console as a Fetch handler, for the worker thread that gets the console's requests relayed. */
export function createConsoleFetch(...args: Parameters<typeof consoleDeps>): ConsoleFetch {
  return consoleFetch(consoleDeps(...args));
}

export function consoleDeps(
  core: Core,
  work: RunWork,
  slack: {
    clients: SlackClients;
    installed?: ((teamId: string, enterpriseId?: string) => Promise<boolean>) | undefined;
  },
  config: Pick<Config, 'console' | 'adminUserIds' | 'slack' | 'logLevel'>,
  logger: Logger,
): ConsoleDeps {
  let team: Promise<string> | undefined;
  const { installed } = slack;
  const installedTeam = async (teamId?: string, enterpriseId?: string | null): Promise<string> => {
    if (installed) {
      if (teamId !== undefined && (await installed(teamId, enterpriseId ?? undefined))) return teamId;
      throw new AppError('slack.not_installed', 'The app is not installed in that workspace.');
    }
    team ??= slack.clients
      .forTeam(undefined)
      .auth.test()
      .then((answer) => answer.team_id ?? '');
    // A failed question is asked again next time.
    team.catch(() => {
      team = undefined;
    });
    return team;
  };
  const deps: ConsoleDeps = {
    access: consoleAccess(core),
    deciders: core.deciders,
    approvals: core.approvals,
    edits: core.edits,
    work,
    queries: core.stores.auditQueries,
    votes: core.stores.approvals,
    slackSignIn: config.console.slackSignIn
      ? createSlackSignIn({
          ...config.console.slackSignIn,
          apiUrl: config.slack.apiUrl,
          clock: core.clock,
          logger,
          logLevel: config.logLevel,
        })
      : undefined,
    policy: { inForce: () => core.policy, toolNames: toolNames(), adminUserIds: config.adminUserIds },
    chainCheck: new ChainCheck({
      chain: (range) => core.stores.auditQueries.chain(range),
      clock: core.clock,
      logger,
    }),
    installedTeam,
    config: { ...config.console, slackApiUrl: config.slack.apiUrl },
    clock: core.clock,
    logger,
  };
  return deps;
}
