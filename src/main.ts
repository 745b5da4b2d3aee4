/**
 * `npm start`'s entry (built to dist/main.js): checks the configuration, the policy and MCP files and the Slack
 * tokens, then starts the bot wired in `compose/` (`compose/bot.ts`). Where each kind of request goes:
 *
 * - Slack events over HTTP (`POST /slack/events` on `PORT`): the request guard (`slack/request-guard.ts`, in
 *   `slack/guarded-receiver.ts`) checks the signature and size and accepts each request once, then Bolt routes
 *   it to `slack/listeners/` (registered in `compose/slack.ts`); a message becomes work for the conversation
 *   service, done in a worker thread (or here with `WORKERS=0`).
 * - Slack events over Socket Mode (`SLACK_APP_TOKEN` set): the same listeners, behind Bolt's socket receiver
 *   (`slack/app.ts`), each event accepted once by its id.
 * - Clicks: an Approve click over HTTP is answered by the request guard itself (`slack/clicks/click.ts`), over
 *   the socket by `slack/listeners/actions.ts`; both record it, ack, and hand it to where clicks are decided
 *   (`slack/clicks/decide-click.ts`, in a worker or here). Reject, Edit and View all arguments open forms
 *   (`slack/listeners/decision-modals.ts`).
 * - Slash commands (`/approvals`, same URL or socket): `slack/listeners/commands.ts`.
 * - The health endpoint (`GET /healthz` on `PORT`, both modes): `slack/app.ts`, with the details
 *   `compose/bot.ts` gathers.
 * - Background timers (deadlines, recovery, clicks left undecided, the SIEM push, checkpoints, retention):
 *   `compose/background.ts`, in the first worker thread (or here with `WORKERS=0`).
 * - Worker threads (`WORKERS`): started by `workers/worker-pool.ts`; each runs `worker-thread.ts` on the
 *   services `compose/worker.ts` wires.
 * - Signals: SIGHUP reloads the policy file; SIGTERM and SIGINT stop intake and let the work in flight finish.
 */

import { agentsFileProblem } from './agent/agents-file.js';
import { loadApprovalPolicy } from './approvals/policy-file.js';
import { readPolicySource } from './approvals/policy-source.js';
import { undecidableTools, undecidableWarning } from './approvals/who-to-tell.js';
import { type Bot, createBot } from './compose/bot.js';
import { loadConfig, withDotEnv } from './config.js';
import { describeDatabase } from './db/open-database.js';
import { AppError, describeError } from './errors.js';
import { createLogger, type Logger } from './logger.js';
import { mcpServerNames, mcpServersFileProblem } from './mcp/load-mcp-servers.js';
import { processOutput } from './output-streams.js';
import { checkSlackTokens } from './slack/token-check.js';
import { toolNames } from './tools/built-in-tools.js';

/** `npm start`: configuration, database, Slack; one clear message and exit code 1 when anything is missing. */
async function main(): Promise<void> {
  // First: a reader that closes the pipe must not turn every later write into an error loop.
  const output = processOutput();
  const loaded = loadConfig(withDotEnv(process.env), 'bot');
  if (!loaded.ok) {
    process.stderr.write(
      `Configuration error: the bot cannot start.\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}\n`,
    );
    process.stderr.write('Set these in the environment or in .env (see .env.example and the README).\n');
    process.exit(1);
  }
  const { config } = loaded;
  // Every file is checked before any stops the start, so one run names every problem in each.
  // The file is read once: its text goes to the worker threads, which build the very policy validated here.
  const file = config.approvalPolicyFile;
  const source = file === undefined ? undefined : readPolicySource(file, toolNames());
  const policy = source ?? loadApprovalPolicy(undefined, toolNames());
  const mcpProblem = mcpServersFileProblem(config.mcpServersFile);
  const agentsProblem = agentsFileProblem(config.agentsFile, {
    builtIn: toolNames(),
    mcpServers: mcpServerNames(config.mcpServersFile),
  });
  if (!policy.ok) {
    process.stderr.write(
      `Approval policy error: the bot cannot start.\n${policy.problems.map((p) => `  - ${p}`).join('\n')}\n`,
    );
    process.stderr.write('Fix the file named in APPROVAL_POLICY_FILE (see docs/policy.md).\n');
  }
  if (mcpProblem !== undefined) {
    process.stderr.write(
      `${mcpProblem}\nThe bot cannot start: fix the file (see docs/mcp.md) or unset MCP_SERVERS_FILE.\n`,
    );
  }
  if (agentsProblem !== undefined) {
    process.stderr.write(
      `${agentsProblem}\nThe bot cannot start: fix the file (see docs/agents.md) or unset AGENTS_FILE.\n`,
    );
  }
  if (!policy.ok || mcpProblem !== undefined || agentsProblem !== undefined) process.exit(1);
  const logger = createLogger(config.logLevel);
  const tokens = await checkSlackTokens(config.slack, { logger, level: config.logLevel });
  if (!tokens.ok) {
    process.stderr.write(`Slack error: the bot cannot start.\n  - ${tokens.problem}\n`);
    process.exit(1);
  }
  output.stdout(`${policy.policy.summary}\n`);
  // Nothing a request carries may end the process: log what escaped a handler and keep serving.
  process.on('unhandledRejection', (reason) =>
    logger.error('unhandled rejection', { error: describeError(reason) }),
  );
  process.on('uncaughtException', (error) =>
    logger.error('uncaught exception', { error: describeError(error) }),
  );

  const bot = await createBot(config, logger, policy.policy, {
    ...(tokens.identity ? { slackIdentity: tokens.identity } : {}),
    ...(source?.ok ? { policyText: source.text } : {}),
  });
  // `kill -HUP`: the policy file is read again; a valid one takes effect for new requests, an invalid one is
  // refused and the policy in force stays.
  process.on('SIGHUP', () => {
    reloadPolicy(config.approvalPolicyFile, bot, logger).catch((error: unknown) =>
      logger.error('approval policy reload failed; the policy in force stays', {
        error: describeError(error),
      }),
    );
  });
  const undecidable = undecidableTools(policy.policy, toolNames(), config.adminUserIds);
  if (undecidable.length > 0) logger.warn(undecidableWarning(undecidable), { tools: undecidable });
  const { port } = await bot.start();
  logger.info('bot started', {
    mode: config.slack.mode.kind,
    port,
    database: describeDatabase(config.database),
    model: config.openai.model,
  });

  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info('shutting down: no new requests; waiting for work in flight', {
      signal,
      graceMs: config.shutdownGraceMs,
    });
    bot.stop(config.shutdownGraceMs).then(
      () => {
        logger.info('stopped; database closed');
        process.exit(0);
      },
      (error: unknown) => {
        logger.error('shutdown failed', { error: describeError(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

async function reloadPolicy(file: string | undefined, bot: Bot, logger: Logger): Promise<void> {
  if (file === undefined) {
    logger.warn('SIGHUP: APPROVAL_POLICY_FILE is not set, so there is no policy file to reload');
    return;
  }
  const source = readPolicySource(file, toolNames());
  if (!source.ok) {
    logger.error('approval policy not reloaded: the file has problems; the policy in force stays', {
      file,
      problems: source.problems.length,
    });
    for (const problem of source.problems) logger.error('approval policy problem', { problem });
    return;
  }
  await bot.reloadPolicy(source.policy, source.text);
  processOutput().stdout(`${source.policy.summary}\n`);
  logger.info('approval policy reloaded: new requests follow it; waiting requests keep their rule', { file });
}

main().catch((error: unknown) => {
  // A database that cannot be opened is a setting to fix, worded as the configuration and Slack errors are.
  if (error instanceof AppError && error.code === 'database.unavailable')
    process.stderr.write(`Database error: the bot cannot start.\n  - ${error.message}\n`);
  else process.stderr.write(`The bot could not start: ${describeError(error)}\n`);
  process.exit(1);
});
