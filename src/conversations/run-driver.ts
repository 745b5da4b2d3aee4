import { type LeaseRenewal, RunHandedOver, type RunLoader, type StopRequests } from '../agent/ports.js';
import { initialRunState } from '../agent/run-state.js';
import type { Runner, RunOutcome } from '../agent/runner.js';
import { auditEvent } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { IdGenerator } from '../ids.js';
import type { Logger } from '../logger.js';
import { KeyedQueue } from './keyed-queue.js';
import { RunPresenter, sessionTitle } from './run-presenter.js';
import { RunSlots } from './run-slots.js';
import type { QueuedRuns } from './store-ports.js';
import type { AnswerTarget, ProgressTarget, ThreadPoster, ThreadRef, WorkDisplay } from './surface-ports.js';
import type { ThreadDelivery } from './thread-delivery.js';

export interface RunDriverDeps {
  /** The conversation's next queued message, started when a run ends. */
  queued: QueuedRuns;
  /** Renews this process's lease on the runs it drives, reads stop requests, and reads a run taken over. */
  runs: LeaseRenewal & StopRequests & Pick<RunLoader, 'getRun'>;
  runner: Runner;
  surface: ThreadPoster & WorkDisplay;
  /** Posts the cards and the reply of a run, and updates cards, owed until Slack has them. */
  delivery: ThreadDelivery;
  clock: Clock;
  newId: IdGenerator;
  logger: Logger;
  /** Runs this thread drives at once (the others wait, leases kept): `MAX_ACTIVE_RUNS`. */
  maxActiveRuns: number;
  /** How long a run's lease lasts; it is renewed every third of it while the run is driven. */
  leaseMs: number;
  /** How often a driven run looks for a stop request made through another process; default 1 s. */
  stopPollMs?: number;
  /** Answers are streamed (the model is asked to stream): tool calls are shown as tasks in them. */
  streamTasks?: boolean;
}

/** Where a driven run answers, and where its progress shows. */
export type DrivenThread = AnswerTarget & ProgressTarget;

/**
 * After the part of an answer a process had streamed when it left the run to another at shutdown: the other
 * process asks the model again, and its answer follows.
 */
export const LEFT_TO_ANOTHER_PROCESS = '…\n\n_(interrupted by a restart: the answer follows)_';

/**
 * The run could not even be ended (its database is unreachable): it is still stored as running, so it is taken
 * up again from its last stored step once the database is back. The thread is told that, not to ask again.
 */
export const INTERRUPTED =
  'A problem on my side interrupted my work on this; I will carry on from where I was once it is solved.';

/** What a driven run shows in the end: see `#present`. */
type Shown = 'ended' | 'waiting' | 'other';

/**
 * Drives runs to their end, one conversation's work at a time in this process: keeps each run's lease while
 * it is driven, abandons its model request when someone stops it, shows its outcome in the thread (cards,
 * the answer, what it cancelled), and once a run has ended starts the conversation's next queued message.
 */
export class RunDriver {
  readonly #deps: RunDriverDeps;
  /** In-process order only: correctness comes from the database, this keeps one process from racing itself. */
  readonly #queue = new KeyedQueue();
  readonly #slots: RunSlots;
  /** The runs this process drives now, to abandon their model request when someone stops one. */
  readonly #driving = new Map<string, AbortController>();
  /** Set once the process is shutting down and its grace period is over: nothing more is driven here. */
  #handingOver = false;

  constructor(deps: RunDriverDeps) {
    this.#deps = deps;
    this.#slots = new RunSlots(deps.maxActiveRuns);
  }

  /**
   * Drives the run after whatever this process already does in its conversation; `first` runs in the same
   * turn, right before. `working: false` when the run is driven only to end it (a stop).
   */
  drive(
    runId: string,
    thread: DrivenThread,
    conversationId: string,
    options: { working?: boolean; first?: () => Promise<void> } = {},
  ): Promise<void> {
    const { first, working } = options;
    return this.#queue.run(conversationId, async () => {
      await first?.();
      await this.#drive(runId, thread, conversationId, working === undefined ? {} : { working });
    });
  }

  /** Starts and drives the conversation's oldest queued message, when it has no active run. */
  startQueued(conversationId: string, thread: ThreadRef): Promise<void> {
    return this.#queue.run(conversationId, () => this.#startQueued(conversationId, thread));
  }

  /** Abandons the model request of the run, when this process drives it. */
  abort(runId: string): void {
    this.#driving.get(runId)?.abort();
  }

  /** The runs this process drives now. */
  driven(): string[] {
    return [...this.#driving.keys()];
  }

  /** Resolves when every run queued so far has been driven. */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  /**
   * Leaves the runs still driven here to another process, when shutting down past the grace period: their model
   * requests are abandoned (`RunHandedOver` as the reason, so nothing of them is streamed, answered or recorded as
   * failed), no run is started or driven here any more, and their leases run out for another process to take
   * them up from their last saved step. Waits up to `boundMs` for what was already being written or posted.
   */
  async handOver(boundMs: number): Promise<void> {
    this.#handingOver = true;
    for (const [runId, abort] of this.#driving) abort.abort(new RunHandedOver(runId));
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, boundMs);
    });
    await Promise.race([this.#queue.idle(), bound]);
    clearTimeout(timer);
  }

  async #drive(
    runId: string,
    thread: DrivenThread,
    conversationId: string,
    options: { working?: boolean },
  ): Promise<void> {
    // Past the grace period: the run's lease runs out and another process drives it.
    if (this.#handingOver) return;
    const presenter = new RunPresenter(this.#deps.surface, thread, this.#deps.logger, {
      ...options,
      tasks: this.#deps.streamTasks ?? false,
    });
    const renewal = this.#keepLease(runId);
    const abort = new AbortController();
    this.#driving.set(runId, abort);
    const watch = this.#watchStop(runId, abort);
    // Waits for a slot with its lease renewed and its stop watched, like a run being driven.
    const free = await this.#slots.take();
    let shown: Shown;
    try {
      shown = await this.#present(runId, thread, presenter, abort.signal);
    } finally {
      free();
      clearInterval(renewal);
      clearInterval(watch);
      this.#driving.delete(runId);
    }
    await presenter.done(shown === 'waiting' ? 'waiting' : 'ended');
    if (shown === 'ended' && !this.#handingOver) await this.#startQueued(conversationId, thread);
  }

  /** Abandons the run's model request once a stop request shows up (made through any process). */
  #watchStop(runId: string, abort: AbortController): NodeJS.Timeout {
    const { runs, logger, stopPollMs = 1_000 } = this.#deps;
    const timer = setInterval(() => {
      if (abort.signal.aborted) return;
      runs.stopRequest(runId).then(
        (by) => {
          if (by !== undefined) abort.abort();
        },
        (error: unknown) => logger.warn('stop check failed', { runId, error: describeError(error) }),
      );
    }, stopPollMs);
    timer.unref();
    return timer;
  }

  /** Renews the run's lease every third of it while this process drives the run. */
  #keepLease(runId: string): NodeJS.Timeout {
    const { runs, leaseMs, logger } = this.#deps;
    const timer = setInterval(() => {
      runs.renewLease(runId).then(
        (held) => {
          if (!held) logger.warn('lease on a run lost; another process drives it now', { runId });
        },
        (error: unknown) => logger.warn('lease renewal failed', { runId, error: describeError(error) }),
      );
    }, leaseMs / 3);
    timer.unref();
    return timer;
  }

  /**
   * Drives the run and shows its outcome: `ended` when the run ended (so queued messages may start), `waiting`
   * when it waits for decisions, `other` when this process has nothing more to do with it.
   */
  async #present(
    runId: string,
    thread: ThreadRef,
    presenter: RunPresenter,
    signal: AbortSignal,
  ): Promise<Shown> {
    const { runner, delivery, logger } = this.#deps;
    let outcome: RunOutcome;
    try {
      outcome = await runner.advance(
        runId,
        { ...presenter.observer, notify: (text) => delivery.say(thread, text) },
        signal,
      );
    } catch (error) {
      if (this.#handingOver) {
        // The database may be closing under it: not a problem to tell the thread about, another process goes on.
        logger.warn('run left to another process at shutdown', { runId, error: describeError(error) });
        await presenter.abandonStream(LEFT_TO_ANOTHER_PROCESS);
        return 'other';
      }
      logger.error('run failed unexpectedly', { runId, error: describeError(error) });
      await presenter.endStream();
      await delivery.say(thread, INTERRUPTED);
      return 'other';
    }
    switch (outcome.kind) {
      case 'paused':
        await presenter.endStream();
        await delivery.postCards(outcome.approvals);
        return 'waiting';
      case 'waiting':
        return 'waiting';
      case 'handed_over':
        // Left to another process at shutdown: what was streamed of its answer goes no further.
        if (this.#handingOver) await presenter.abandonStream(LEFT_TO_ANOTHER_PROCESS);
        return 'other';
      case 'completed':
        // A streamed answer is finished by the presenter; either way it stays owed until Slack has it.
        await delivery.postReply(
          runId,
          thread,
          outcome.text,
          presenter.streaming ? () => presenter.answer(outcome.text) : undefined,
        );
        return 'ended';
      case 'failed':
      case 'cancelled':
        // A stopped answer ends where it is: nothing of it is posted afterwards.
        if (outcome.stoppedBy !== undefined) await presenter.abandonStream();
        else await presenter.endStream();
        await delivery.postReply(runId, thread, outcome.message);
        for (const approval of outcome.cancelledApprovals) await this.#deps.delivery.updateCard(approval);
        return 'ended';
    }
  }

  async #startQueued(conversationId: string, thread: ThreadRef): Promise<void> {
    const { queued, clock, newId } = this.#deps;
    const runId = newId('run');
    const message = await queued.startNextQueuedRun({
      conversationId,
      runId,
      state: initialRunState(),
      audit: (next) => [runStarted(clock.now(), thread, { conversationId, runId, userId: next.userId })],
    });
    if (message) {
      await this.#drive(
        runId,
        {
          teamId: thread.teamId,
          channelId: thread.channelId,
          threadTs: thread.threadTs,
          messageTs: message.messageTs,
          ...startedBy(message),
        },
        conversationId,
        {},
      );
    }
  }
}

/** The `run.started` audit event of a run a message starts in the thread. */
export function runStarted(
  at: number,
  thread: ThreadRef,
  run: { conversationId: string; runId: string; userId: string },
) {
  return auditEvent('run.started', {
    at,
    actor: run.userId,
    teamId: thread.teamId,
    enterpriseId: thread.enterpriseId ?? null,
    conversationId: run.conversationId,
    runId: run.runId,
    payload: { channelId: thread.channelId, threadTs: thread.threadTs },
  });
}

/** Who a run started from a message answers, and the session's title, from that message. */
export function startedBy(message: { userId: string; text: string }) {
  return {
    recipientUserId: message.userId,
    initiatorUserId: message.userId,
    title: sessionTitle(message.text),
  };
}
