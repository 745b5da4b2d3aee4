import { setPriority } from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { WebClient } from '@slack/web-api';
import { ReloadablePolicy } from '../approvals/policy.js';
import { loadApprovalPolicy } from '../approvals/policy-file.js';
import { policyFromText } from '../approvals/policy-source.js';
import { type BackgroundWork, startBackgroundWork } from '../background-work.js';
import { localWork } from '../conversations/run-work.js';
import { createCore } from '../core.js';
import { describeError } from '../errors.js';
import { createLogger } from '../logger.js';
import { createAuditAccess } from '../slack/audit-access.js';
import { slackClickReply } from '../slack/clicks/click-reply.js';
import { decideClick } from '../slack/clicks/decide-click.js';
import { createHomePublisher } from '../slack/home-publisher.js';
import { directMessenger } from '../slack/no-previews.js';
import { createSlackAdapters, WEB_API_LEVELS } from '../slack/slack-adapters.js';
import { slackLibraryLogger } from '../slack/slack-logger.js';
import { SYSTEM_PROMPT } from '../slack/system-prompt.js';
import { toolNames } from '../tools/built-in-tools.js';
import { type FromWorker, isWorkerData, type ToWorker, threadMemory, type WorkerData } from './protocol.js';

/**
 * Lowers this thread's scheduling priority (on Linux the nice value belongs to each thread), so when the cores
 * are busy the thread answering Slack, which has 3 seconds to do it, runs first; runs wait a moment instead.
 * Where the system does not allow it, nothing changes.
 */
function yieldToIntake(): void {
  try {
    setPriority(0, WORKER_NICENESS);
  } catch {
    // Not permitted or not supported: the worker runs at the process's priority.
  }
}

/** The nice value of a worker thread: below the intake's (0), well above the lowest (19). */
const WORKER_NICENESS = 5;

/** How long a worker collects the ids of what it took before telling the intake thread. */
const TAKEN_BATCH_MS = 20;

/**
 * Tells the intake thread what was stored or decided, in one message per 20 ms at most: each message wakes the
 * thread that answers Slack, and under a burst of clicks one per click cost it about as much as a click's ack.
 * A worker that dies within those 20 ms has its last few handed over again, which a message's dedupe keys and
 * a click's compare-and-set make harmless.
 */
function takenInBatches(send: (message: FromWorker) => void): (id: number) => void {
  let ids: number[] = [];
  return (id) => {
    ids.push(id);
    if (ids.length > 1) return;
    setTimeout(() => {
      send({ kind: 'taken', ids });
      ids = [];
    }, TAKEN_BATCH_MS);
  };
}

/**
 * A worker thread that drives runs: the core on a connection of its own, the model and Slack clients, the
 * follow-up of decisions (cards, the resumed run, App Home), and, for one worker of the process, the background
 * work (deadlines, recovery). The intake thread hands it what to do; it never answers Slack requests itself.
 */
async function main(port: NonNullable<typeof parentPort>, data: WorkerData): Promise<void> {
  const send = (message: FromWorker) => port.postMessage(message);
  const taken = takenInBatches(send);
  yieldToIntake();
  const { config } = data;
  const logger = createLogger(config.logLevel);
  const file = config.approvalPolicyFile;
  const policy =
    file !== undefined && data.policyText !== undefined
      ? policyFromText(file, data.policyText, toolNames())
      : loadApprovalPolicy(file, toolNames());
  if (!policy.ok) throw new Error(policy.problems.join('; '));
  const inForce = new ReloadablePolicy(policy.policy);
  const slack = { botToken: config.slack.botToken, apiUrl: config.slack.apiUrl, logLevel: config.logLevel };
  const core = await createCore(
    config,
    logger,
    inForce,
    (stores) =>
      createSlackAdapters({
        ...slack,
        cards: stores.cards,
        clock: { now: () => Date.now() },
        logger,
        systemPrompt: SYSTEM_PROMPT,
        adminUserIds: config.adminUserIds,
      }),
    { owner: data.owner },
  );
  const client = new WebClient(slack.botToken, {
    slackApiUrl: slack.apiUrl,
    logger: slackLibraryLogger(logger, slack.logLevel, 'web-api'),
    logLevel: WEB_API_LEVELS[slack.logLevel],
  });
  const access = createAuditAccess(client, {
    isAdmin: (userId) => core.deciders.isAdmin(userId),
    includeWorkspaceAdmins: config.auditIncludesWorkspaceAdmins,
    now: () => core.clock.now(),
    logger,
  });
  core.followUp.watch(
    createHomePublisher(client, {
      queries: core.stores.auditQueries,
      viewers: core.stores.homeViewers,
      access,
      deciders: core.deciders,
      clock: core.clock,
      logger,
    }),
  );
  const decisions = {
    approvals: core.approvals,
    work: localWork(core.conversations, core.followUp, logger),
    reply: slackClickReply({
      surface: core.adapters.interactive,
      directMessage: directMessenger(client),
      logger,
    }),
    logger,
    ledger: core.stores.requests,
  };
  await core.mcp.connectAll();
  const background: BackgroundWork | undefined = data.background
    ? await startBackgroundWork(core, client, config, logger)
    : undefined;
  const failed = (what: string) => (error: unknown) =>
    logger.error(`${what} failed`, { error: describeError(error) });
  port.on('message', (message: ToWorker) => {
    switch (message.kind) {
      case 'message':
        core.conversations
          .handleMessage(message.message, message.keys, () => taken(message.id))
          .catch(failed('message'));
        return;
      case 'click':
        decideClick(decisions, message.click, message.key, () => taken(message.id)).catch(failed('click'));
        return;
      case 'settled':
        core.followUp.after(message.settlement, message.where).catch(failed('decision follow-up'));
        return;
      case 'stop-run':
        core.conversations.requestStop(message.stop).catch(failed('stop'));
        return;
      case 'check-deadlines':
        void (background?.checkDeadlines() ?? Promise.resolve()).then(() =>
          send({ kind: 'deadlines-checked' }),
        );
        return;
      case 'memory':
        send({ kind: 'memory', memory: threadMemory() });
        return;
      case 'policy': {
        const reloaded = file === undefined ? undefined : policyFromText(file, message.text, toolNames());
        if (reloaded?.ok) inForce.replace(reloaded.policy);
        else logger.error('reloaded approval policy refused by a worker', { problems: reloaded?.problems });
        return;
      }
      case 'stop':
        void stop(message.graceMs);
        return;
    }
  });
  const stop = async (graceMs: number) => {
    await background?.stop();
    await Promise.race([core.conversations.idle(), new Promise((resolve) => setTimeout(resolve, graceMs))]);
    await background?.finish();
    await core.mcp.close();
    await core.database.close();
    send({ kind: 'stopped' });
  };
  send({ kind: 'ready' });
}

const data: unknown = workerData;
if (parentPort && isWorkerData(data)) {
  const port = parentPort;
  main(port, data).catch((error: unknown) => {
    port.postMessage({ kind: 'failed', error: describeError(error) } satisfies FromWorker);
  });
}
