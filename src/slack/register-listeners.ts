import type { ApprovalService } from '../approvals/approval-service.js';
import type { ArgumentEditService } from '../approvals/argument-edit-service.js';
import type { AuditQueries } from '../approvals/audit-queries.js';
import type { RequestLedger } from '../approvals/click-inbox.js';
import type { Deciders } from '../approvals/deciders.js';
import type { DelegationStore } from '../approvals/delegation.js';
import type { HomeViewerStore } from '../approvals/home-viewers.js';
import type { ApprovalPolicy } from '../approvals/policy.js';
import type { StandingApprovalStore } from '../approvals/ports.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import type { RunWork } from '../conversations/run-work.js';
import { type GreetingStore, WelcomeService } from '../conversations/welcome-service.js';
import { randomId } from '../ids.js';
import type { Logger } from '../logger.js';
import { groupCommit } from './accepted-requests.js';
import type { SlackRuntime } from './app.js';
import { createAuditAccess } from './audit-access.js';
import type { ClickWork } from './clicks/click.js';
import { slackClickReply } from './clicks/click-reply.js';
import { localClicks } from './clicks/decide-click.js';
import { createHomePublisher, type HomePublisher } from './home-publisher.js';
import { registerActionListeners } from './listeners/actions.js';
import { registerCommandListeners } from './listeners/commands.js';
import { registerDecisionModalListeners } from './listeners/decision-modals.js';
import { registerHomeListeners } from './listeners/home.js';
import { registerMessageListeners } from './listeners/messages.js';
import { registerMessagesTabListener } from './listeners/messages-tab.js';
import { registerSessionStopListener } from './listeners/session-stop.js';
import { modalMetadataKey } from './modal-metadata.js';
import { directMessenger } from './no-previews.js';
import { rejectMalformedIds } from './payload-ids.js';
import type { SlackAdapters } from './slack-adapters.js';

/** The core as the listeners use it: its services, and the stores they read through their ports. */
export interface ListenerCore {
  conversations: ConversationService;
  approvals: ApprovalService;
  deciders: Deciders;
  edits: ArgumentEditService;
  clock: Clock;
  adapters: SlackAdapters;
  policy: Pick<ApprovalPolicy, 'namedApprovers'>;
  stores: {
    delegations: DelegationStore;
    auditQueries: AuditQueries;
    homeViewers: HomeViewerStore;
    standing: StandingApprovalStore;
    greetings: GreetingStore;
    requests: RequestLedger;
  };
}

/**
 * Registers every listener of the Slack app on the core: messages, card buttons and forms, `/approvals`,
 * App Home and the Messages tab. Returns App Home's publisher, which the follow-up of decisions refreshes (in
 * whichever thread that work runs).
 */
export function registerListeners(
  runtime: SlackRuntime,
  core: ListenerCore,
  /** Where the work after intake happens: this thread, or worker threads. */
  work: RunWork,
  /** Where Approve clicks are decided after their ack (workers); by default this thread. */
  clicks: ClickWork | undefined,
  config: Pick<Config, 'auditIncludesWorkspaceAdmins' | 'suggestedPrompts' | 'slack'>,
  logger: Logger,
): HomePublisher {
  const { app } = runtime;
  const { stores, adapters } = core;
  const access = createAuditAccess(app.client, {
    isAdmin: (userId) => core.deciders.isAdmin(userId),
    includeWorkspaceAdmins: config.auditIncludesWorkspaceAdmins,
    now: () => core.clock.now(),
    logger,
  });
  const home = createHomePublisher(app.client, {
    queries: stores.auditQueries,
    viewers: stores.homeViewers,
    access,
    deciders: core.deciders,
    clock: core.clock,
    logger,
  });
  // First: no listener sees a request whose ids are malformed or of a workspace Slack never names.
  app.use(rejectMalformedIds(logger));
  registerMessageListeners(app, { conversations: core.conversations, work, logger });
  registerSessionStopListener(app, { work, logger });
  const reply = slackClickReply({
    surface: adapters.interactive,
    directMessage: directMessenger(app.client),
    logger,
  });
  const mode = config.slack.mode;
  const modalKey = modalMetadataKey(mode.kind === 'http' ? mode.signingSecret : mode.appToken);
  // Requests arriving together are recorded in one transaction, each before its answer.
  const accept = groupCommit(stores.requests);
  const decided =
    clicks ?? localClicks({ approvals: core.approvals, work, reply, logger, ledger: stores.requests });
  registerActionListeners(app, { accept, clicks: decided, logger });
  runtime.acceptRequests(accept, decided);
  registerDecisionModalListeners(app, {
    approvals: core.approvals,
    edits: core.edits,
    work,
    reply,
    modalKey,
    logger,
  });
  registerCommandListeners(app, {
    queries: stores.auditQueries,
    access,
    standing: stores.standing,
    isAdmin: (userId: string) => core.deciders.isAdmin(userId),
    now: () => core.clock.now(),
    logger,
    apiUrl: config.slack.apiUrl,
    delegation: {
      store: stores.delegations,
      newId: () => randomId('dlg'),
      mayDelegate: (userId: string) => core.deciders.mayDelegate(userId, core.policy.namedApprovers()),
    },
  });
  registerHomeListeners(app, { home, logger });
  const welcome = new WelcomeService({
    store: stores.greetings,
    surface: adapters.surface,
    clock: core.clock,
    logger,
    prompts: config.suggestedPrompts,
  });
  registerMessagesTabListener(app, { welcome, logger });
  app.error(async (error) => {
    logger.error('slack listener error', { error: error.message, code: error.code });
  });
  return home;
}
