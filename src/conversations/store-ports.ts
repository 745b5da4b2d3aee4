import type { HistoryItem } from '../agent/history.js';
import type { RunState } from '../agent/run-state.js';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { RemovedWorkspaces } from '../approvals/removed-workspaces.js';
import type { AuditInput } from '../audit/audit-event.js';
import type { SurfaceKind } from '../surfaces.js';
import type { DeliveryKind } from './delivery.js';
import type { CardUpdate, IncomingMessage, ThreadRef } from './surface-ports.js';

/*
 * What the conversations keep in the database: conversations and their queued messages, stop requests, what
 * is owed to threads, what a stopped process left behind. Implemented in `src/db`.
 */

export interface QueuedMessage {
  id: number;
  userId: string;
  text: string;
  messageTs: string;
}

/** Which conversation a thread is. */
export interface ConversationDirectory {
  find(thread: ThreadRef): Promise<string | undefined>;
  /** The conversation of the thread, created (served by `surface`) when it is new. */
  findOrCreate(thread: ThreadRef, surface: SurfaceKind): Promise<string>;
  thread(conversationId: string): Promise<ThreadRef | undefined>;
}

/** What taking a message in writes: it starts a run, or waits behind the conversation's active run. */
export interface MessageIntake {
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
}

/** What the end of a run starts: the conversation's next queued message. */
export interface QueuedRuns {
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
}

/** What a stop asks and records: who started the thread, the request itself, what was refused. */
export interface StopStore {
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

/** Every conversation port, as the database implements them in one store. */
export type ConversationStore = ConversationDirectory & MessageIntake & QueuedRuns & StopStore;

/** What a stop request found. */
export type StopRecorded =
  /** The thread has no active run (none ever, or it ended already). */
  | { kind: 'no_run' }
  /** A running run: its driver honours the request. */
  | { kind: 'running'; runId: string; conversationId: string }
  /** A paused run, now claimed by this process, to end it. */
  | { kind: 'claimed'; runId: string; conversationId: string };

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
  | {
      kind: 'reply';
      runId: string;
      thread: ThreadRef;
      text: string;
      attempts: number;
      /** When the run ended and its message was first owed. */
      owedSince: number;
      /** The thread shows it already (it was posted, then its write-off failed): it is only written off. */
      shown: boolean;
    }
  /** A card to render again from its request's state now (Slack refused an earlier update). */
  | { kind: 'card_update'; approval: ApprovalRecord; update: CardUpdate; attempts: number; owedAt: number };

/** The cards owed from the moment their requests are stored. */
export interface OwedCards {
  /** Takes the cards still owed for these requests (pending, and not being posted by another process). */
  takeCards(approvalIds: readonly string[]): Promise<Extract<Delivery, { kind: 'card' }>[]>;
  /** The card is in Slack: its place is stored, with its audit event, and it is owed no more. */
  cardPosted(
    approvalId: string,
    card: { channelId: string; messageTs: string },
    audit: AuditInput[],
  ): Promise<void>;
}

/** Card updates Slack refused, owed until one lands. */
export interface OwedCardUpdates {
  /**
   * Slack refused to update the request's card: an update is owed, due at `dueAt`, for any process (one per
   * card, rendered from the state stored when it is sent, so the latest state wins). `attempts`: failed tries so
   * far. Every change to a request owes its update from its own transaction already, leased to the process that
   * made it (the approval and run stores do that); this gives it back to all, to be tried again later.
   */
  oweCardUpdate(
    approval: ApprovalRecord,
    owed: { dueAt: number; attempts: number; update: CardUpdate },
  ): Promise<void>;
  /**
   * When the update this process owes for the request was owed (the time of the change it shows), read before
   * the card is rendered; undefined when this process owes none.
   */
  owedCardUpdate(approvalId: string): Promise<number | undefined>;
  /**
   * These updates landed, each rendered after it was owed at `owedAt`: they are owed no more. One owed again
   * since (a later change, a failure given back, another process) stays owed.
   */
  cardsUpdated(shown: readonly ShownCardUpdate[]): Promise<void>;
}

/** A card update that landed, and when the update it shows was owed. */
export interface ShownCardUpdate {
  approvalId: string;
  owedAt: number;
}

/** The last message of each run, owed from the transaction that ends the run. */
export interface OwedReplies {
  /**
   * Takes (again) the reply owed since this process ended the run, right before posting it; false when another
   * process took it meanwhile (this one was slow past the lease) or it is owed no more.
   */
  takeReply(runId: string): Promise<boolean>;
  /** The reply is in Slack: it is owed no more. */
  replyPosted(runId: string): Promise<void>;
}

/** Deliveries tried again after a failure, whichever process owes them. */
export interface DeliveryRetries {
  /** Takes every delivery due by `now` in the conversations `surface` serves (or in one conversation). */
  takeDue(scope: RecoveryScope, now: number): Promise<Delivery[]>;
  /**
   * Gives a delivery that failed back, to be tried at `retryAt`; `text` replaces what a reply still owes,
   * `noticed` records that the thread was told (a card that could not be posted) or shows it (a reply).
   */
  failed(delivery: Delivery, outcome: { retryAt: number; text?: string; noticed?: boolean }): Promise<void>;
  /** A delivery this process took is owed no more (its workspace removed the app), recorded with `audit`. */
  dropped(delivery: Delivery, audit: AuditInput[]): Promise<void>;
  /**
   * Every delivery owed in the conversations of workspaces the app was removed from is owed no more, each
   * recorded with the events `audit` makes of it; resolves with how many.
   */
  dropWorkspace(scope: RemovedWorkspaces, audit: (owed: OwedDelivery) => AuditInput[]): Promise<number>;
}

/** An owed delivery, as a workspace's removal drops it. */
export interface OwedDelivery {
  kind: DeliveryKind;
  teamId: string;
  enterpriseId: string | null;
  conversationId: string;
  runId: string | null;
  approvalId: string | null;
  attempts: number;
}

/**
 * What the bot owes threads until Slack accepts it: approval cards (owed from the moment their request is
 * stored) and the last message of each run (owed in the transaction that ends the run). A process takes a
 * delivery with a lease before posting it, so however many processes retry, each is posted by one of them.
 * Every outbox port, as the database implements them in one store.
 */
export type DeliveryOutbox = OwedCards & OwedCardUpdates & OwedReplies & DeliveryRetries;

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
