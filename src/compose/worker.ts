import type { ApprovalClick } from '../approvals/click-inbox.js';
import { ReloadablePolicy } from '../approvals/policy.js';
import { loadApprovalPolicy } from '../approvals/policy-file.js';
import { policyFromText } from '../approvals/policy-source.js';
import { HAND_OVER_STEP_MS } from '../conversations/conversation-service.js';
import { localWork } from '../conversations/run-work.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { decideClick } from '../slack/clicks/decide-click.js';
import { createSlackAdapters } from '../slack/slack-adapters.js';
import { SYSTEM_PROMPT } from '../slack/system-prompt.js';
import { toolNames } from '../tools/built-in-tools.js';
import type { ConsoleFetch } from '../web/console-app.js';
import { type PassedOnWork, passingOn, type WorkerData } from '../workers/protocol.js';
import { doesBackground, servesConsole } from '../workers/worker-roles.js';
import { type BackgroundWork, startBackgroundWork } from './background.js';
import { consoleSlack, createConsoleFetch } from './console.js';
import { createCore } from './core.js';
import { adminsOf, botTokensOf, installationsOf } from './installations.js';
import { clickDeps, createHome, type SlackCore } from './slack.js';

/** A worker thread's services, wired: what the intake thread hands over is done through them. */
export interface WorkerServices {
  core: SlackCore;
  /** Decides a click handed over; `taken` once it is decided or refused (see `decideClick`). */
  decideClick(click: ApprovalClick, key: string, taken: () => void): Promise<void>;
  /** Checks approval deadlines now, when this worker does the background work. */
  checkDeadlines(): Promise<void>;
  /** Puts the reloaded policy file's text (validated by the intake thread) in force; a refused one is logged. */
  reloadPolicy(text: string): void;
  /** The web console, in the worker that serves it (see worker-roles.ts). */
  console: ConsoleFetch | undefined;
  /** Stops the background work, lets the runs in flight finish (bounded by `graceMs`), closes the database. */
  stop(graceMs: number): Promise<void>;
}

/**
 * A worker thread's wiring, by its role (see worker-roles.ts): the policy from the text the intake thread
 * validated, the core on a connection of its own with the Slack side built from the Web API alone (no Bolt
 * app) and the MCP servers (whose tools' schemas an edit is checked against); for a run worker App Home's
 * publisher for the decisions it follows up, and for one of them the background work; for the console's worker
 * the web console, whose decisions are followed up by the run workers (`passOn`).
 */
export async function composeWorker(
  data: WorkerData,
  logger: Logger,
  passOn: (work: PassedOnWork) => void,
): Promise<WorkerServices> {
  const { config } = data;
  const file = config.approvalPolicyFile;
  const policy =
    file !== undefined && data.policyText !== undefined
      ? policyFromText(file, data.policyText, toolNames())
      : loadApprovalPolicy(file, toolNames());
  if (!policy.ok) throw new AppError('config.policy_file', policy.problems.join('; '));
  const inForce = new ReloadablePolicy(policy.policy);
  const clock = { now: () => Date.now() };
  const core = await createCore(
    config,
    logger,
    inForce,
    (stores) =>
      createSlackAdapters({
        tokens: botTokensOf(config, stores, clock, logger),
        apiUrl: config.slack.apiUrl,
        logLevel: config.logLevel,
        cards: stores.cards,
        clock,
        logger,
        systemPrompt: SYSTEM_PROMPT,
        admins: adminsOf(config, stores),
      }),
    { owner: data.owner },
  );
  const consoleOnly = servesConsole(data.role);
  // A run worker follows up the decisions made here (clicks) and passed on to it; the console's passes its on.
  if (!consoleOnly) core.followUp.watch(createHome(core, config, logger).watcher);
  const work = consoleOnly ? passingOn(passOn) : localWork(core.conversations, core.followUp, logger);
  const decisions = clickDeps(core, work, logger);
  await core.mcp.connectAll();
  const background: BackgroundWork | undefined = doesBackground(data.role)
    ? await startBackgroundWork(core, config, logger)
    : undefined;
  return {
    core,
    console: consoleOnly
      ? createConsoleFetch(
          core,
          work,
          consoleSlack(core, installationsOf(config, core.stores, clock, logger)),
          config,
          logger,
        )
      : undefined,
    decideClick: (click, key, taken) => decideClick(decisions, click, key, { taken }),
    checkDeadlines: () => background?.checkDeadlines() ?? Promise.resolve(),
    reloadPolicy(text) {
      const reloaded = file === undefined ? undefined : policyFromText(file, text, toolNames());
      if (reloaded?.ok) inForce.replace(reloaded.policy);
      else logger.error('reloaded approval policy refused by a worker', { problems: reloaded?.problems });
    },
    async stop(graceMs) {
      await background?.stop();
      await Promise.race([core.conversations.idle(), new Promise((resolve) => setTimeout(resolve, graceMs))]);
      await core.conversations.handOver(HAND_OVER_STEP_MS);
      await background?.finish();
      await core.mcp.close();
      await core.database.close();
    },
  };
}
