import type { HistoryItem } from '../agent/history.js';
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
    /** Earlier thread messages; stored before the message only while the conversation has no history. */
    context?: HistoryItem;
  }): 'started' | 'queued' | 'queued_behind_approval';
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

/** A streamed answer is addressed to the person who asked (Slack requires it outside DMs). */
export interface AnswerTarget extends ThreadRef {
  recipientUserId?: string;
}

/** Where progress shows: the thread, and the user's message for the fallback reaction. */
export interface ProgressTarget extends ThreadRef {
  messageTs?: string;
}

/** Shows that the bot is working. Best effort: failures are logged, never thrown, never delay an answer. */
export interface Progress {
  set(status: string): void;
  /** Removes every sign of work; resolves once Slack was told (or refused). */
  clear(): Promise<void>;
}

/** An answer written while the model produces it. Never throws; falls back to plain messages by itself. */
export interface AnswerStream {
  append(text: string): void;
  /** Ends the answer; resolves with the text Slack could not be made to show ('' once all of it is). */
  finish(): Promise<string>;
}

/** A message read back from a thread, for context. */
export interface ThreadMessage {
  ts: string;
  /** Slack user id of the author, when a person wrote it. */
  userId?: string;
  /** Name of the bot or app that wrote it, when one did. */
  botName?: string;
  text: string;
}

/** What the conversation service says in the thread. The Slack adapter implements it; so can a terminal. */
export interface ThreadSurface {
  postText(thread: ThreadRef, text: string): Promise<void>;
  /* The capabilities below are optional: a surface without them (a terminal) gets plain `postText`. */
  /** Posts a model's answer (Markdown), split into several messages when it is long. */
  postAnswer?(thread: ThreadRef, text: string): Promise<void>;
  startProgress?(target: ProgressTarget): Progress;
  streamAnswer?(target: AnswerTarget): AnswerStream;
  /** Up to `limit` messages of the thread older than `before`, oldest first. */
  readThread?(thread: ThreadRef, options: { before: string; limit: number }): Promise<ThreadMessage[]>;
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
