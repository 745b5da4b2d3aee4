import type { HistoryItem } from '../agent/history.js';
import type { RunState } from '../agent/run-state.js';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { GroupDirectory } from '../approvals/ports.js';
import type { AuditInput } from '../audit/audit-event.js';
import type { SurfaceKind } from '../surfaces.js';
import type { ChannelPoster } from '../tools/ports.js';

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
  find(thread: ThreadRef): Promise<string | undefined>;
  /** The conversation of the thread, created (served by `surface`) when it is new. */
  findOrCreate(thread: ThreadRef, surface: SurfaceKind): Promise<string>;
  thread(conversationId: string): Promise<ThreadRef | undefined>;
  /**
   * Starts a run (leased to this process) with the user's message as its first item, unless the conversation
   * has an active (running or paused) run; then the message is queued instead. One transaction holding the
   * conversation, so of two processes receiving messages at once, one starts and the other queues.
   */
  startRunOrQueue(input: {
    conversationId: string;
    runId: string;
    message: IncomingMessage;
    state: RunState;
    audit: AuditInput[];
    /** Earlier thread messages; stored before the message only while the conversation has no history. */
    context?: HistoryItem;
  }): Promise<'started' | 'queued' | 'queued_behind_approval'>;
  /**
   * A message as Slack delivered it, in one transaction: records its delivery `keys` (and does nothing more when
   * one was seen before: a retry, or a mention that also came as a message), creates the thread's conversation
   * (served by `surface`) when it is new, then starts a run or queues the message as `startRunOrQueue` does.
   */
  receiveMessage(input: {
    keys: readonly string[];
    surface: SurfaceKind;
    runId: string;
    message: IncomingMessage;
    state: RunState;
    audit: (conversationId: string) => AuditInput[];
    context?: HistoryItem;
  }): Promise<
    { kind: 'duplicate' } | { kind: 'started' | 'queued' | 'queued_behind_approval'; conversationId: string }
  >;
  /**
   * When the conversation has no active run, takes its oldest queued message and starts a run (leased to this
   * process) with it, in one transaction, so a queued message is never lost between the two.
   */
  startNextQueuedRun(input: {
    conversationId: string;
    runId: string;
    state: RunState;
    audit: (message: QueuedMessage) => AuditInput[];
  }): Promise<QueuedMessage | undefined>;
  /**
   * Records `userId`'s request to stop the thread's active run, in one transaction holding the run: a running
   * run keeps driving until its driver (whichever process) sees the request; a paused run is claimed (leased
   * to this process) so that this process ends it at once. The first request is kept.
   */
  requestStop(input: { thread: ThreadRef; userId: string }): Promise<StopRecorded>;
  /** Who started the thread's conversation (the requester of its first run), when the thread has one. */
  starter(thread: ThreadRef): Promise<{ conversationId: string; userId: string } | undefined>;
  /** Appends audit events on their own (what was refused records nothing else). */
  recordAudit(events: AuditInput[]): Promise<void>;
}

/**
 * Who is in a channel, as the chat surface knows it (Slack: `conversations.members`). False when the surface
 * cannot say (a failed lookup): nobody is let through on an answer that is not there.
 */
export interface ChannelMembership {
  isMember(input: { teamId: string; channelId: string; userId: string }): Promise<boolean>;
}

/** What a stop request found. */
export type StopRecorded =
  /** The thread has no active run (none ever, or it ended already). */
  | { kind: 'no_run' }
  /** A running run: its driver honours the request. */
  | { kind: 'running'; runId: string; conversationId: string }
  /** A paused run, now claimed by this process, to end it. */
  | { kind: 'claimed'; runId: string; conversationId: string };

/** Someone clicked Slack's stop button in a thread. */
export interface StopRequest extends ThreadRef {
  userId: string;
}

/** An owed delivery a process has taken (with a lease) to post. */
export type Delivery =
  | {
      kind: 'card';
      approval: ApprovalRecord;
      /** Failed tries so far. */
      attempts: number;
      /** The thread was already told that this card could not be posted. */
      noticed: boolean;
    }
  | { kind: 'reply'; runId: string; thread: ThreadRef; text: string; attempts: number }
  /** A card to render again from its request's state now (Slack refused an earlier update). */
  | { kind: 'card_update'; approval: ApprovalRecord; update: CardUpdate; attempts: number };

/**
 * What the bot owes threads until Slack accepts it: approval cards (owed from the moment their request is
 * stored) and the last message of each run (owed in the transaction that ends the run). A process takes a
 * delivery with a lease before posting it, so however many processes retry, each is posted by one of them.
 */
export interface DeliveryOutbox {
  /** Takes the cards still owed for these requests (pending, and not being posted by another process). */
  takeCards(approvalIds: readonly string[]): Promise<Extract<Delivery, { kind: 'card' }>[]>;
  /**
   * Takes (again) the reply owed since this process ended the run, right before posting it; false when another
   * process took it meanwhile (this one was slow past the lease) or it is owed no more.
   */
  takeReply(runId: string): Promise<boolean>;
  /** Takes every delivery due by `now` in the conversations `surface` serves (or in one conversation). */
  takeDue(scope: RecoveryScope, now: number): Promise<Delivery[]>;
  /** The card is in Slack: its place is stored, with its audit event, and it is owed no more. */
  cardPosted(
    approvalId: string,
    card: { channelId: string; messageTs: string },
    audit: AuditInput[],
  ): Promise<void>;
  /** The reply is in Slack: it is owed no more. */
  replyPosted(runId: string): Promise<void>;
  /**
   * Slack refused to update the request's card: an update is owed, due at `dueAt` (one per card, rendered from
   * the state stored when it is sent, so the latest state wins). `attempts`: failed tries so far.
   */
  oweCardUpdate(
    approval: ApprovalRecord,
    owed: { dueAt: number; attempts: number; update: CardUpdate },
  ): Promise<void>;
  /** The owed update (taken by this process) landed: it is owed no more. */
  cardUpdated(approvalId: string): Promise<void>;
  /**
   * Gives a delivery that failed back, to be tried at `retryAt`; `text` replaces what a reply still owes,
   * `noticed` records that the thread was told.
   */
  failed(delivery: Delivery, outcome: { retryAt: number; text?: string; noticed?: boolean }): Promise<void>;
}

/**
 * Whose leftovers a process takes over: every conversation of its surface, or one conversation (the terminal
 * chat resuming its own thread).
 */
export type RecoveryScope = { surface: SurfaceKind } | { conversationId: string };

/** A running run whose process stopped: this process now holds its lease and drives it. */
export interface ClaimedRun {
  runId: string;
  conversationId: string;
  thread: ThreadRef;
}

/** What a stopped process left behind, found and taken over by another (or by itself after a restart). */
export interface RunRecovery {
  /**
   * Takes over the running runs whose lease has expired, in the conversations `surface` serves; with
   * `conversationId`, that conversation's running runs whatever their lease (the terminal chat resuming its
   * own thread). Never the runs in `driven`: the caller drives them still (their lease ran out while the
   * database was unreachable), and a second driver would ask the model for an answer the first one has.
   */
  claimAbandonedRuns(scope: RecoveryScope, driven?: readonly string[]): Promise<ClaimedRun[]>;
  /** Approved calls of the run left `executing` that were never reported. */
  unreportedExecutions(runId: string): Promise<ApprovalRecord[]>;
  /** Stores `result` on such a call once the thread was told, so it is reported once. */
  setUnknownOutcome(approvalId: string, result: string): Promise<void>;
  /** Conversations of `surface` with queued messages but no active run (their run ended in a process that stopped). */
  stalledQueues(surface: SurfaceKind): Promise<string[]>;
}

/** A streamed answer is addressed to the person who asked (Slack requires it outside DMs). */
export interface AnswerTarget extends ThreadRef {
  recipientUserId?: string;
}

/** Where progress shows: the thread, and the user's message for the fallback reaction. */
export interface ProgressTarget extends ThreadRef {
  messageTs?: string;
  /** The session's title, when the thread's work starts from a message (used where the session is new). */
  title?: string | undefined;
  /** Who started the work. */
  initiatorUserId?: string;
}

/**
 * Shows what the bot does in a thread: working, waiting for a person, or done. Best effort: failures are
 * logged, never thrown, never delay an answer.
 */
export interface Progress {
  /** Working; `status` says on what, where the surface can show text ("is running list_notes…"). */
  set(status: string): void;
  /** Waiting for a person (an approval); resolves once Slack was told (or refused). */
  suspend(): Promise<void>;
  /** Removes every sign of work; resolves once Slack was told (or refused). */
  clear(): Promise<void>;
}

/** One tool call shown as a task in a streamed answer; the same `id` updates it. */
export interface TaskUpdate {
  id: string;
  title: string;
  status: 'pending' | 'in_progress' | 'complete' | 'error';
  /** A short result (at most 256 characters), never the call's arguments. */
  output?: string;
}

/** An answer written while the model produces it. Never throws; falls back to plain messages by itself. */
export interface AnswerStream {
  append(text: string): void;
  /**
   * Shows a tool call as a task in the answer, after the text appended so far; text appended later follows it.
   * Optional: a surface without tasks keeps ending the answer at a tool call.
   */
  task?(update: TaskUpdate): void;
  /**
   * The last `text` appended was cut off (the model's connection broke mid-answer): what of it was not shown
   * yet is dropped, what was shown is marked as cut off, and text appended later (the answer asked again)
   * follows the mark. Optional: without it the cut text stays as it is.
   */
  cut?(text: string): void;
  /** Ends the answer; resolves with the text Slack could not be made to show ('' once all of it is). */
  finish(): Promise<string>;
  /**
   * Ends the answer where it is, dropping what was not shown yet (someone stopped the work; Slack may have
   * stopped the message already). Optional: without it the answer is finished.
   */
  abandon?(): Promise<void>;
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
  postApprovalCard(approval: ApprovalRecord): Promise<CardLocation>;
  /** Re-renders every copy of the request's card from the state stored now. */
  updateApprovalCard(approval: ApprovalRecord, options?: CardUpdate): Promise<void>;
}

/** Where a card is shown: a channel and its message ts. */
export interface CardLocation {
  channelId: string;
  messageTs: string;
}

export interface CardUpdate {
  /** Where a click saw the thread card, when its ts was never stored (a crash right after posting). */
  fallback?: CardLocation;
  /** Approvals so far, used only when the store cannot say. */
  approvers?: readonly string[];
  /** The decision was "Approve for this thread". */
  standing?: boolean;
}

/** Remembers deliveries already handled, so Slack's retries and double deliveries get one answer. */
export interface DedupeStore {
  /**
   * Records every key; true only when none was seen before (one transaction, so racing deliveries agree,
   * whichever process they reach).
   */
  claim(keys: readonly string[]): Promise<boolean>;
  /** Forgets keys older than `before` (Slack retries within minutes; a day is plenty). */
  prune(before: number): Promise<void>;
}

/** What a surface (the Slack bot, the terminal) gives the core to speak through. */
export interface SurfaceAdapters {
  /** Where conversations are spoken in. */
  surface: ThreadSurface & ChannelPoster;
  /** Whose conversations these are. */
  surfaceKind: SurfaceKind;
  /** The surface that updates cards after a decision (Slack: a client that never waits out a rate limit). */
  decisionSurface?: Pick<ThreadSurface, 'updateApprovalCard'>;
  /** Slack user groups, for rules that name one. */
  groups?: GroupDirectory;
  /** Channel members, for who may stop a thread's work; without it only the thread's starter may. */
  channelMembers?: ChannelMembership;
  systemPrompt: string;
}
