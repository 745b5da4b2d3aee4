import { BreakGlassReviews } from '../approvals/break-glass-reviews.js';
import type { Config } from '../config.js';
import type { DecisionWatchers } from '../conversations/decision-follow-up.js';
import type { RunWork } from '../conversations/run-work.js';
import { WelcomeService } from '../conversations/welcome-service.js';
import { randomId } from '../ids.js';
import type { Logger } from '../logger.js';
import { groupCommit } from '../slack/accepted-requests.js';
import type { SlackRuntime } from '../slack/app.js';
import { type AuditAccess, createAuditAccess } from '../slack/audit-access.js';
import { createBreakGlassReviewPoster } from '../slack/break-glass-review-poster.js';
import type { ClickWork } from '../slack/clicks/click.js';
import { slackClickReply } from '../slack/clicks/click-reply.js';
import { type ClickDeps, localClicks } from '../slack/clicks/decide-click.js';
import { createHomePublisher, type HomePublisher } from '../slack/home-publisher.js';
import { registerActionListeners } from '../slack/listeners/actions.js';
import { registerBatchListeners } from '../slack/listeners/batch-decisions.js';
import { registerBreakGlassListeners } from '../slack/listeners/break-glass.js';
import { registerCommandListeners } from '../slack/listeners/commands.js';
import { registerDecisionModalListeners } from '../slack/listeners/decision-modals.js';
import { registerHomeListeners } from '../slack/listeners/home.js';
import { registerMessageListeners } from '../slack/listeners/messages.js';
import { registerMessagesTabListener } from '../slack/listeners/messages-tab.js';
import { registerSessionStopListener } from '../slack/listeners/session-stop.js';
import { modalMetadataKey } from '../slack/modal-metadata.js';
import { directMessenger } from '../slack/no-previews.js';
import { rejectMalformedIds } from '../slack/payload-ids.js';
import type { SlackAdapters } from '../slack/slack-adapters.js';
import { installationUnreadable } from '../slack/slack-errors.js';
import type { Core } from './core.js';

/** The core with the Slack side as its surface. */
export type SlackCore = Core<SlackAdapters>;

/**
 * App Home's publisher and who may read the audit log from Slack, built alike in the thread answering Slack
 * and in a worker (which refreshes App Home after the decisions it follows up); `watcher` is what the Slack side
 * does after every decision: App Home, and the review card of a break-glass approval. Each speaks in a
 * workspace with that workspace's client.
 */
export function createHome(
  core: SlackCore,
  config: Pick<Config, 'auditIncludesWorkspaceAdmins'>,
  logger: Logger,
): { home: HomePublisher; access: AuditAccess; watcher: DecisionWatchers } {
  const { clients } = core.adapters;
  const access = createAuditAccess(clients, {
    isAdmin: (workspace, userId) => core.deciders.isAdmin(workspace, userId),
    includeWorkspaceAdmins: config.auditIncludesWorkspaceAdmins,
    now: () => core.clock.now(),
    logger,
  });
  const home = createHomePublisher(clients, {
    queries: core.stores.auditQueries,
    viewers: core.stores.homeViewers,
    access,
    deciders: core.deciders,
    clock: core.clock,
    logger,
  });
  const reviews = createBreakGlassReviewPoster(clients, { deciders: core.deciders, logger });
  const watcher: DecisionWatchers = {
    afterDecision: async (approval, deciders) => {
      await reviews.afterDecision(approval, deciders);
      await home.afterDecision(approval, deciders);
    },
  };
  return { home, access, watcher };
}

/**
 * What deciding an Approve click needs, wherever it is decided (a live click in this thread or a worker, a click
 * picked up later): replies go through the click's own client, or a DM in the clicker's workspace to a click
 * from App Home.
 */
export function clickDeps(core: SlackCore, work: RunWork, logger: Logger): ClickDeps {
  return {
    approvals: core.approvals,
    work,
    reply: slackClickReply({
      surface: core.adapters.interactive,
      directMessage: directMessenger(core.adapters.clients),
      logger,
    }),
    logger,
    ledger: core.stores.requests,
  };
}

/**
 * Registers every listener of the Slack app on the core: messages, card buttons and forms, `/approvals`,
 * App Home and the Messages tab. Returns what the follow-up of decisions does on the Slack side (App Home, the
 * review card of a break-glass approval), in whichever thread that work runs.
 */
export function registerListeners(
  runtime: SlackRuntime,
  core: SlackCore,
  /** Where the work after intake happens: this thread, or worker threads. */
  work: RunWork,
  /** Where Approve clicks are decided after their ack (workers); by default this thread. */
  clicks: ClickWork | undefined,
  config: Pick<Config, 'auditIncludesWorkspaceAdmins' | 'suggestedPrompts' | 'slack'>,
  logger: Logger,
): DecisionWatchers {
  const { app } = runtime;
  const { stores } = core;
  const { home, access, watcher } = createHome(core, config, logger);
  // First: no listener sees a request whose ids are malformed or of a workspace Slack never names.
  app.use(rejectMalformedIds(logger));
  registerMessageListeners(app, { conversations: core.conversations, work, logger });
  registerSessionStopListener(app, { work, logger });
  const decisions = clickDeps(core, work, logger);
  const mode = config.slack.mode;
  const modalKey = modalMetadataKey(mode.kind === 'http' ? mode.signingSecret : mode.appToken);
  // Requests arriving together are recorded in one transaction, each before its answer.
  const accept = groupCommit(stores.requests);
  const decided = clicks ?? localClicks(decisions);
  registerActionListeners(app, { accept, clicks: decided, logger });
  runtime.acceptRequests({ accept, forget: (key) => stores.requests.forget(key) }, decided);
  registerDecisionModalListeners(app, {
    ...decisions,
    approvals: core.approvals,
    edits: core.edits,
    modalKey,
  });
  registerBatchListeners(app, decisions);
  registerBreakGlassListeners(app, {
    ...decisions,
    approvals: core.approvals,
    reviews: new BreakGlassReviews({ store: stores.breakGlass, clock: core.clock, deciders: core.deciders }),
    modalKey,
  });
  registerCommandListeners(app, {
    queries: stores.auditQueries,
    access,
    standing: stores.standing,
    isAdmin: (workspace, userId) => core.deciders.isAdmin(workspace, userId),
    // Installed into several workspaces, each names its own admins; with one token they are ADMIN_USER_IDS.
    admins: { admins: core.deciders, store: config.slack.oauth ? stores.teamAdmins : undefined },
    now: () => core.clock.now(),
    logger,
    apiUrl: config.slack.apiUrl,
    delegation: {
      store: stores.delegations,
      newId: () => randomId('dlg'),
      mayDelegate: (workspace, userId) =>
        core.deciders.mayDelegate(workspace, userId, core.policy.namedApprovers(workspace.teamId)),
    },
  });
  registerHomeListeners(app, { home, logger });
  const welcome = new WelcomeService({
    store: stores.greetings,
    surface: core.adapters.surface,
    clock: core.clock,
    logger,
    prompts: config.suggestedPrompts,
  });
  registerMessagesTabListener(app, { welcome, logger });
  app.error(async (error) => {
    logger.error('slack listener error', { error: error.message, code: error.code });
    // Answered with an error, so Slack sends it again (the request guard forgets its key first); any other
    // error is the listener's, after the ack, and sending the request again would not help.
    if (installationUnreadable(error)) throw error;
  });
  return watcher;
}
