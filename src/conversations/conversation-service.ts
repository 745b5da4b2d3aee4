import { agentCallAtWork } from '../agent/agent-frames.js';
import { initialRunState, parseRunState } from '../agent/run-state.js';
import type { ApprovalRecord } from '../approvals/approval.js';
import { describeError } from '../errors.js';
import type { SurfaceKind } from '../surfaces.js';
import type { LandedCardUpdates } from './landed-card-updates.js';
import { RunDriver, type RunDriverDeps, runStarted, startedBy } from './run-driver.js';
import { StopGate } from './stop-permission.js';
import type { ConversationStore, DeliveryOutbox, RunRecovery } from './store-ports.js';
import type {
  ChannelMembership,
  IncomingMessage,
  StopRequest,
  ThreadRef,
  ThreadSurface,
} from './surface-ports.js';
import { readThreadContext } from './thread-context.js';
import { ThreadDelivery } from './thread-delivery.js';

/**
 * The run driver's settings (`RunDriverDeps`, documented there) but the ones built here, with the stores and the
 * surface whole, and the service's own.
 */
export interface ConversationServiceDeps extends Omit<RunDriverDeps, 'queued' | 'surface' | 'delivery'> {
  store: ConversationStore;
  outbox: DeliveryOutbox;
  recovery: RunRecovery;
  surface: ThreadSurface;
  /** Who this process serves: it creates, recovers and posts in these conversations only. */
  surfaceKind: SurfaceKind;
  /** The delivery retry interval (cards and replies Slack did not accept). */
  deliveryRetryMs: number;
  /** The card updates that landed, written off together (shared with the decisions' follow-up). */
  landedCardUpdates: LandedCardUpdates;
  /** Earlier thread messages given to the model when the bot joins a thread mid-way; 0 turns it off. */
  threadContextMessages?: number;
  /** Who is in a channel, for who may stop its threads' work; without it only a thread's starter may. */
  channelMembers?: ChannelMembership | undefined;
}

/** What became of a message taken in. */
type Received =
  | { kind: 'started'; runId: string; conversationId: string; message: IncomingMessage }
  /** Waiting behind the conversation's active run (the thread was told). */
  | { kind: 'queued' }
  /** Seen before: a retry or a double delivery. */
  | { kind: 'duplicate' }
  /** The database could not take it (the thread was told). */
  | { kind: 'failed' };

/**
 * How long each step of a hand-over at shutdown (`handOver`) may wait for a write or a Slack post under way: both
 * steps fit in the 2 s a worker is given past its grace period.
 */
export const HAND_OVER_STEP_MS = 750;

export const QUEUED_NOTICE = 'I will answer this once the pending approval in this thread is decided.';
const BUSY_NOTICE = 'I will answer this as soon as I finish what I am working on in this thread.';
const NOT_STARTED =
  'I could not start working on this because of a problem on my side; please send it again.';

/**
 * Turns messages into runs and runs into thread messages. Work is serialised per conversation in the
 * database: one active run at a time, later messages queued and started, in order, by whichever process ends
 * the run before them. A run is driven only by the process holding its lease, renewed as it goes
 * (`RunDriver`); runs whose process stopped are taken over by `recover`.
 */
export class ConversationService {
  readonly #deps: ConversationServiceDeps;
  /** Messages being taken in (their transaction), so `idle` waits for them too. */
  readonly #receiving = new Set<Promise<Received>>();
  readonly #delivery: ThreadDelivery;
  readonly #driver: RunDriver;
  readonly #stopGate: StopGate;

  constructor(deps: ConversationServiceDeps) {
    this.#deps = deps;
    this.#stopGate = new StopGate({
      store: deps.store,
      members: deps.channelMembers,
      clock: deps.clock,
      logger: deps.logger,
    });
    this.#delivery = new ThreadDelivery({
      outbox: deps.outbox,
      landed: deps.landedCardUpdates,
      surface: deps.surface,
      surfaceKind: deps.surfaceKind,
      clock: deps.clock,
      logger: deps.logger,
      retryMs: deps.deliveryRetryMs,
    });
    this.#driver = new RunDriver({ ...deps, queued: deps.store, delivery: this.#delivery });
  }

  /** Is this thread a conversation the bot is part of? (Thread replies without a mention count only then.) */
  async isKnownThread(thread: ThreadRef): Promise<boolean> {
    return (await this.#deps.store.find(thread)) !== undefined;
  }

  /**
   * Starts a run for the message and drives it, or queues it behind the conversation's active run. `keys` are
   * its delivery keys: a message whose key was seen before (a retry) is dropped. `onTaken` is called once the
   * message is stored (or found a duplicate, or the thread was told it could not be).
   */
  async handleMessage(
    message: IncomingMessage,
    keys: readonly string[] = [],
    onTaken?: () => void,
  ): Promise<void> {
    const received = await this.#take(message, keys).finally(() => onTaken?.());
    if (received.kind === 'started') await this.#driveStarted(received);
  }

  /**
   * Takes a message in, in one transaction (see `MessageIntake.receiveMessage`), and says in the thread
   * when it waits behind another run. When the database cannot take the message (down, busy), the thread is
   * told, so it is not lost without a word.
   */
  #take(message: IncomingMessage, keys: readonly string[]): Promise<Received> {
    const receiving = this.#receive(message, keys);
    this.#receiving.add(receiving);
    void receiving.finally(() => this.#receiving.delete(receiving));
    return receiving;
  }

  async #receive(message: IncomingMessage, keys: readonly string[]): Promise<Received> {
    const { store, surface, logger, threadContextMessages = 0 } = this.#deps;
    try {
      // The thread's earlier messages, when the bot joins a thread mid-way: read before the transaction.
      const joining =
        threadContextMessages > 0 &&
        message.threadTs !== message.messageTs &&
        (await store.find(message)) === undefined;
      const context = joining
        ? await readThreadContext(surface, message, threadContextMessages, logger)
        : undefined;
      const runId = this.#deps.newId('run');
      const received = await store.receiveMessage({
        keys,
        surface: this.#deps.surfaceKind,
        runId,
        message,
        state: initialRunState(),
        audit: (conversationId) => [
          runStarted(this.#deps.clock.now(), message, { conversationId, runId, userId: message.userId }),
        ],
        ...(context ? { context } : {}),
      });
      switch (received.kind) {
        case 'duplicate':
          return received;
        case 'started':
          return { kind: 'started', runId, conversationId: received.conversationId, message };
        case 'queued':
        case 'queued_behind_approval':
          await this.#say(message, received.kind === 'queued' ? BUSY_NOTICE : QUEUED_NOTICE);
          return { kind: 'queued' };
      }
    } catch (error) {
      await this.#notStarted(message, error);
      return { kind: 'failed' };
    }
  }

  /** Drives a run a message started, after whatever this process already does in its conversation. */
  #driveStarted(started: Extract<Received, { kind: 'started' }>): Promise<void> {
    const { runId, conversationId, message } = started;
    return this.#driver.drive(runId, { ...message, ...startedBy(message) }, conversationId);
  }

  /**
   * Someone asked to stop the thread's work (Slack's stop button). The request is recorded in the database, so
   * whichever process drives the run honours it: the model request in flight is abandoned, nothing more
   * executes, the run's pending approvals are cancelled, and the thread is told who stopped it. A paused run is
   * ended here at once. Stopping only ever prevents work: a run is never driven further because of it. Only
   * the thread's starter or a member of its channel may stop it (`mayStop`); any other stop changes nothing.
   */
  async requestStop(stop: StopRequest): Promise<void> {
    const { store, surface, logger } = this.#deps;
    if (!(await this.#stopGate.admit(stop))) return;
    const thread = { teamId: stop.teamId, channelId: stop.channelId, threadTs: stop.threadTs };
    const recorded = await store.requestStop({ thread, userId: stop.userId });
    logger.info('stop requested', { channelId: stop.channelId, userId: stop.userId, found: recorded.kind });
    switch (recorded.kind) {
      case 'no_run':
        // Nothing works here (any more): the session must not stay "working".
        await surface.startProgress?.(thread).clear();
        return;
      case 'running':
        this.#driver.abort(recorded.runId);
        return;
      case 'claimed':
        await this.#driver.drive(recorded.runId, thread, recorded.conversationId, { working: false });
        return;
    }
  }

  /** Resumes a run whose paused turn was just settled (the caller's decision or expiry claimed it). */
  resume(runId: string, approval: ApprovalRecord): Promise<void> {
    const thread = {
      teamId: approval.teamId,
      ...(approval.enterpriseId ? { enterpriseId: approval.enterpriseId } : {}),
      channelId: approval.channelId,
      threadTs: approval.threadTs,
      recipientUserId: approval.requesterId,
    };
    return this.#driver.drive(runId, thread, approval.conversationId);
  }

  /**
   * Takes over what stopped processes left behind, in this surface's conversations (or in one conversation,
   * whatever the leases: the terminal resuming its own thread): tells threads about calls that were running
   * (never run again), drives the runs, starts messages left queued behind a run that ended, and posts what
   * Slack has not accepted yet. Runs periodically, so a dead process's work moves on within a lease.
   */
  async recover(only?: { conversationId: string }): Promise<void> {
    const { recovery, logger, surfaceKind } = this.#deps;
    await this.#delivery.retry(only);
    const claimed = await recovery.claimAbandonedRuns(
      only ?? { surface: surfaceKind },
      this.#driver.driven(),
    );
    if (claimed.length > 0) logger.info('resuming interrupted runs', { count: claimed.length });
    const work = claimed.map(({ runId, conversationId, thread }) =>
      this.#driver.drive(runId, thread, conversationId, { first: () => this.#reportUnknownOutcomes(runId) }),
    );
    const stalled = only ? [only.conversationId] : await recovery.stalledQueues(surfaceKind);
    for (const conversationId of stalled) {
      const thread = await this.#deps.store.thread(conversationId);
      if (thread) work.push(this.#driver.startQueued(conversationId, thread));
    }
    await Promise.all(work);
  }

  /** Posts the cards and replies Slack has not accepted yet whose next try is due. */
  retryDeliveries(): Promise<void> {
    return this.#delivery.retry();
  }

  /**
   * At shutdown, once the grace period is over and before the database closes: the runs still driven here are
   * left to another process (nothing of them posted, nothing recorded as failed, no notice in their threads), and
   * what was being written or posted is let finish, each step up to `boundMs`.
   */
  async handOver(boundMs: number): Promise<void> {
    await this.#driver.handOver(boundMs);
    await this.#delivery.close(boundMs);
  }

  /** Resolves when all work taken in or queued so far has finished (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.#receiving.size > 0) await Promise.allSettled([...this.#receiving]);
    await this.#driver.idle();
  }

  async #notStarted(message: IncomingMessage, error: unknown): Promise<void> {
    this.#deps.logger.error('message could not be started', {
      channelId: message.channelId,
      error: describeError(error),
    });
    await this.#say(message, NOT_STARTED);
  }

  /**
   * Calls a stopped process left `executing` are reported once and never run again. A call of an agent whose
   * frame is open is not one of them: that agent goes on where it was, and its answer follows.
   */
  async #reportUnknownOutcomes(runId: string): Promise<void> {
    const executing = await this.#deps.recovery.unreportedExecutions(runId);
    if (executing.length === 0) return;
    const run = await this.#deps.runs.getRun(runId);
    const parsed = run ? parseRunState(run.state) : undefined;
    for (const approval of executing) {
      if (parsed?.ok && agentCallAtWork(parsed.state, approval)) continue;
      const text = `I stopped while ${approval.toolName} was running, so whether it finished is unknown. I did not run it again.`;
      await this.#delivery.say(approval, text);
      await this.#deps.recovery.setUnknownOutcome(approval.id, text);
    }
  }

  #say(thread: ThreadRef, text: string): Promise<void> {
    return this.#delivery.say(thread, text);
  }
}
