import type { RunStore } from '../agent/ports.js';
import type { AuditQueries } from '../approvals/audit-queries.js';
import type { BreakGlassStore } from '../approvals/break-glass.js';
import type { RequestLedger } from '../approvals/click-inbox.js';
import type { DelegationStore } from '../approvals/delegation.js';
import type { HomeViewerStore } from '../approvals/home-viewers.js';
import type {
  ApprovalCardStore,
  ApprovalStore,
  ApprovalTimerStore,
  StandingApprovalStore,
} from '../approvals/ports.js';
import type { TeamAdminStore } from '../approvals/team-admins.js';
import type { AuditPushStore } from '../audit/audit-push.js';
import type { CheckpointStore } from '../audit/checkpointer.js';
import type { RetentionStore } from '../audit/retention.js';
import type { ConsoleLinkStore, ConsoleSessionStore } from '../console/ports.js';
import type {
  ConversationStore,
  DedupeStore,
  DeliveryOutbox,
  RunRecovery,
} from '../conversations/store-ports.js';
import type { GreetingStore } from '../conversations/welcome-service.js';
import type { InstallationRecords } from '../slack/installations/installation-records.js';
import type { NotesStore } from '../tools/ports.js';
import { createApprovalCardStore } from './approval-card-store.js';
import { createApprovalStore } from './approval-store.js';
import { createApprovalTimerStore } from './approval-timer-store.js';
import { createAuditPushStore } from './audit-push-store.js';
import { createAuditQueryStore } from './audit-query-store.js';
import { createBreakGlassStore } from './break-glass-store.js';
import { createCheckpointStore } from './checkpoint-store.js';
import { createConsoleLinkStore, createConsoleSessionStore } from './console-store.js';
import { createConversationStore } from './conversation-store.js';
import { createDedupeStore } from './dedupe-store.js';
import { createDelegationStore } from './delegation-store.js';
import { createDeliveryOutbox } from './delivery-outbox.js';
import { createGreetingStore } from './greeting-store.js';
import { createHomeViewerStore } from './home-viewer-store.js';
import { createInstallationRecords } from './installation-records-store.js';
import { createNotesStore } from './notes-store.js';
import { createRequestLedger } from './request-ledger.js';
import { createRetentionStore } from './retention-store.js';
import { createRunRecovery } from './run-recovery.js';
import { createRunStore } from './run-store.js';
import { createStandingApprovalStore } from './standing-approvals.js';
import type { StoreContext } from './store-context.js';
import { createTeamAdminStore } from './team-admin-store.js';

/** Every store of the core's ports, one instance of each, on one database. */
export interface Stores {
  runs: RunStore;
  conversations: ConversationStore;
  deliveries: DeliveryOutbox;
  recovery: RunRecovery;
  approvals: ApprovalStore;
  cards: ApprovalCardStore;
  timers: ApprovalTimerStore;
  standing: StandingApprovalStore;
  breakGlass: BreakGlassStore;
  auditQueries: AuditQueries;
  auditPush: AuditPushStore;
  checkpoints: CheckpointStore;
  retention: RetentionStore;
  dedupe: DedupeStore;
  requests: RequestLedger;
  greetings: GreetingStore;
  notes: NotesStore;
  homeViewers: HomeViewerStore;
  delegations: DelegationStore;
  consoleSessions: ConsoleSessionStore;
  consoleLinks: ConsoleLinkStore;
  /** The app's installations in Slack (OAuth mode). */
  installations: InstallationRecords;
  /** Each workspace's admins (OAuth mode). */
  teamAdmins: TeamAdminStore;
}

export function createStores(ctx: StoreContext): Stores {
  return {
    runs: createRunStore(ctx),
    conversations: createConversationStore(ctx),
    deliveries: createDeliveryOutbox(ctx),
    recovery: createRunRecovery(ctx),
    approvals: createApprovalStore(ctx),
    cards: createApprovalCardStore(ctx),
    timers: createApprovalTimerStore(ctx),
    standing: createStandingApprovalStore(ctx),
    breakGlass: createBreakGlassStore(ctx),
    auditQueries: createAuditQueryStore(ctx.db),
    auditPush: createAuditPushStore(ctx),
    checkpoints: createCheckpointStore(ctx.db),
    retention: createRetentionStore(ctx),
    dedupe: createDedupeStore(ctx),
    requests: createRequestLedger(ctx),
    greetings: createGreetingStore(ctx),
    notes: createNotesStore(ctx),
    homeViewers: createHomeViewerStore(ctx),
    delegations: createDelegationStore(ctx),
    consoleSessions: createConsoleSessionStore(ctx),
    consoleLinks: createConsoleLinkStore(ctx),
    installations: createInstallationRecords(ctx),
    teamAdmins: createTeamAdminStore(ctx),
  };
}
