import type { RunState } from '../agent/run-state.js';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { AuditInput } from '../audit/audit-event.js';

/** Where a conversation lives in Slack (or the terminal). */
export interface ThreadRef {
  teamId: string;
  channelId: string;
  threadTs: string;
}

export interface IncomingMessage extends ThreadRef {
  userId: string;
  text: string;
  messageTs: string;
}

export interface QueuedMessage {
  id: number;
  userId: string;
  text: string;
  messageTs: string;
}

export interface ConversationStore {
  find(thread: ThreadRef): string | undefined;
  findOrCreate(thread: ThreadRef): string;
  thread(conversationId: string): ThreadRef | undefined;
  /**
   * Starts a run with the user's message as its first item, unless the conversation has an active (running
   * or paused) run; then the message is queued instead. One transaction.
   */
  startRunOrQueue(input: {
    conversationId: string;
    runId: string;
    message: IncomingMessage;
    state: RunState;
    audit: AuditInput[];
  }): 'started' | 'queued';
  /**
   * When the conversation has no active run, takes its oldest queued message and starts a run with it, in one
   * transaction, so a queued message is never lost between the two.
   */
  startNextQueuedRun(input: {
    conversationId: string;
    runId: string;
    state: RunState;
    audit: (message: QueuedMessage) => AuditInput[];
  }): QueuedMessage | undefined;
  /** Runs left `running` by a process that stopped: they are driven again at start-up. */
  interruptedRuns(): { runId: string; conversationId: string }[];
  /** Pending approvals whose card was never posted (a crash or a Slack error right after pausing). */
  approvalsWithoutCard(): ApprovalRecord[];
  setCardMessage(approvalId: string, channelId: string, messageTs: string, audit: AuditInput[]): void;
  /** Remembers a run's last thread message until Slack accepts it; `null` once posted. */
  setPendingReply(runId: string, text: string | null): void;
  /** Thread messages of ended runs that were never posted (a Slack error, or a crash while posting). */
  pendingReplies(): { runId: string; conversationId: string; text: string }[];
  /** Approved calls a stopped process left `executing` that no run has reported yet. */
  unreportedExecutions(): ApprovalRecord[];
  /** Stores `result` on such a call once the thread was told, so it is reported once. */
  setUnknownOutcome(approvalId: string, result: string): void;
  /** Conversations with queued messages (a stopped process may have left them waiting with no run). */
  conversationsWithQueue(): string[];
}

/** What the conversation service says in the thread. The Slack adapter implements it; so can a terminal. */
export interface ThreadSurface {
  postText(thread: ThreadRef, text: string): Promise<void>;
  /** Posts the approval card; resolves with the message ts. */
  postApprovalCard(approval: ApprovalRecord): Promise<{ channelId: string; messageTs: string }>;
  updateApprovalCard(approval: ApprovalRecord): Promise<void>;
}

/** Remembers deliveries already handled, so Slack's retries and double deliveries get one answer. */
export interface DedupeStore {
  /** Records every key; true only when none was seen before (one transaction, so racing deliveries agree). */
  claim(keys: readonly string[]): boolean;
  /** Forgets keys older than `before` (Slack retries within minutes; a day is plenty). */
  prune(before: number): void;
}
