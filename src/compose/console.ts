import type { IncomingMessage, ServerResponse } from 'node:http';
import type { WebClient } from '@slack/web-api';
import { ChainCheck } from '../audit/chain-check.js';
import type { Config } from '../config.js';
import { ConsoleAccess } from '../console/console-access.js';
import type { RunWork } from '../conversations/run-work.js';
import type { Logger } from '../logger.js';
import { createSlackSignIn } from '../slack/openid-sign-in.js';
import { toolNames } from '../tools/built-in-tools.js';
import { type ConsoleFetch, consoleFetch, consoleRequestListener } from '../web/console-app.js';
import type { ConsoleDeps } from '../web/console-deps.js';
import type { Core } from './core.js';

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
 * `/console` of the bot's HTTP server. `client` asks Slack once which workspace the bot is installed in; Sign in
 * with Slack asks Slack's Web API at the same SLACK_API_URL.
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

function consoleDeps(
  core: Core,
  work: RunWork,
  client: WebClient,
  config: Pick<Config, 'console' | 'adminUserIds' | 'slack' | 'logLevel'>,
  logger: Logger,
): ConsoleDeps {
  let team: Promise<string> | undefined;
  const installedTeam = () => {
    team ??= client.auth.test().then((answer) => answer.team_id ?? '');
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
