import type { Clock, IdGenerator } from '../agent/ports.js';
import { initialRunState } from '../agent/run-state.js';
import type { Runner, RunOutcome } from '../agent/runner.js';
import type { ApprovalRecord } from '../approvals/approval.js';
import { auditEvent } from '../audit/audit-event.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { KeyedQueue } from './keyed-queue.js';
import type { AnswerTarget, ConversationStore, IncomingMessage, ThreadRef, ThreadSurface } from './ports.js';
import { RunPresenter } from './run-presenter.js';
import { readThreadContext } from './thread-context.js';
import { ThreadDelivery } from './thread-delivery.js';

export interface ConversationServiceDeps {
  store: ConversationStore;
  runner: Runner;
  surface: ThreadSurface;
  clock: Clock;
  newId: IdGenerator;
  logger: Logger;
  /** Earlier thread messages given to the model when the bot joins a thread mid-way; 0 turns it off. */
  threadContextMessages?: number;
}

export const QUEUED_NOTICE = 'I will answer this once the pending approval in this thread is decided.';
const BUSY_NOTICE = 'I will answer this as soon as I finish what I am working on in this thread.';
const INTERNAL_FAILURE =
  'Something went wrong on my side while working on this, so I stopped; please try again.';

/**
 * Turns Slack messages into runs and runs into thread messages. Work is serialised per conversation: one
 * active run at a time, later messages queued (in the database) and answered in order after it.
 */
export class ConversationService {
  readonly #deps: ConversationServiceDeps;
  readonly #queue = new KeyedQueue();
  readonly #delivery: ThreadDelivery;

  constructor(deps: ConversationServiceDeps) {
    this.#deps = deps;
    this.#delivery = new ThreadDelivery(deps);
  }

  /** Is this thread a conversation the bot is part of? (Thread replies without a mention count only then.) */
  isKnownThread(thread: ThreadRef): boolean {
    return this.#deps.store.find(thread) !== undefined;
  }

  handleMessage(message: IncomingMessage): Promise<void> {
    const joining = this.#deps.store.find(message) === undefined;
    const conversationId = this.#deps.store.findOrCreate(message);
    return this.#queue.run(conversationId, async () => {
      const { surface, logger, threadContextMessages = 0 } = this.#deps;
      const context = joining
        ? await readThreadContext(surface, message, threadContextMessages, logger)
        : undefined;
      const runId = this.#deps.newId('run');
      const started = this.#deps.store.startRunOrQueue({
        conversationId,
        runId,
        message,
        state: initialRunState(),
        audit: [this.#runStarted(message, conversationId, runId, message.userId)],
        ...(context ? { context } : {}),
      });
      if (started !== 'started') {
        await this.#say(message, started === 'queued_behind_approval' ? QUEUED_NOTICE : BUSY_NOTICE);
        return;
      }
      await this.#drive(runId, { ...message, recipientUserId: message.userId }, conversationId);
    });
  }

  /** Resumes a run whose last pending approval was just decided (the caller's decision claimed it). */
  resume(runId: string, approval: ApprovalRecord): Promise<void> {
    const thread = {
      teamId: approval.teamId,
      channelId: approval.channelId,
      threadTs: approval.threadTs,
      recipientUserId: approval.requesterId,
    };
    return this.#queue.run(approval.conversationId, () =>
      this.#drive(runId, thread, approval.conversationId),
    );
  }

  /**
   * At start-up: post what Slack never accepted, tell threads about calls a stopped process left running (they
   * are never re-run), drive runs left running, and start messages left queued behind a finished run.
   * Expired and executing approvals are settled by the runner when the run is driven. `only` limits this to
   * the threads a surface can speak in (the Slack bot leaves terminal conversations to the terminal).
   */
  async recover(only: (thread: ThreadRef) => boolean = () => true): Promise<void> {
    const { store, logger } = this.#deps;
    await this.#delivery.retry(only);
    for (const approval of store.unreportedExecutions()) {
      if (!only(approval)) continue;
      const text = `I stopped while ${approval.toolName} was running, so whether it finished is unknown. I did not run it again.`;
      await this.#delivery.say(approval, text);
      store.setUnknownOutcome(approval.id, text);
    }
    const interrupted = store.interruptedRuns().filter(({ conversationId }) => {
      const thread = store.thread(conversationId);
      return thread !== undefined && only(thread);
    });
    if (interrupted.length > 0) logger.info('resuming interrupted runs', { count: interrupted.length });
    const work = interrupted.map(({ runId, conversationId }) => {
      const thread = store.thread(conversationId);
      if (!thread) return Promise.resolve();
      return this.#queue.run(conversationId, () => this.#drive(runId, thread, conversationId));
    });
    for (const conversationId of store.conversationsWithQueue()) {
      const thread = store.thread(conversationId);
      if (thread && only(thread))
        work.push(this.#queue.run(conversationId, () => this.#startQueued(conversationId, thread)));
    }
    await Promise.all(work);
  }

  /** Posts the cards and replies Slack has not accepted yet; called periodically while the bot runs. */
  retryDeliveries(only: (thread: ThreadRef) => boolean = () => true): Promise<void> {
    return this.#delivery.retry(only);
  }

  /** Resolves when all work queued so far has finished (tests, shutdown). */
  idle(): Promise<void> {
    return this.#queue.idle();
  }

  async #drive(
    runId: string,
    thread: AnswerTarget & { messageTs?: string },
    conversationId: string,
  ): Promise<void> {
    const presenter = new RunPresenter(this.#deps.surface, thread, this.#deps.logger);
    const ended = await this.#present(runId, thread, presenter);
    await presenter.done();
    if (ended) await this.#startQueued(conversationId, thread);
  }

  /** Drives the run and shows its outcome; true when the run ended (so queued messages may start). */
  async #present(runId: string, thread: ThreadRef, presenter: RunPresenter): Promise<boolean> {
    let outcome: RunOutcome;
    try {
      outcome = await this.#deps.runner.advance(runId, {
        ...presenter.observer,
        notify: (text) => this.#say(thread, text),
      });
    } catch (error) {
      this.#deps.logger.error('run failed unexpectedly', { runId, error: describeError(error) });
      await presenter.endStream();
      await this.#say(thread, INTERNAL_FAILURE);
      return false;
    }
    switch (outcome.kind) {
      case 'paused':
        await presenter.endStream();
        await this.#delivery.postCards(outcome.approvals);
        return false;
      case 'waiting':
        return false;
      case 'completed':
        // A streamed answer is finished by the presenter; either way it stays owed until Slack has it.
        await this.#delivery.postReply(
          runId,
          thread,
          outcome.text,
          presenter.streaming ? () => presenter.answer(outcome.text) : undefined,
        );
        return true;
      case 'failed':
      case 'cancelled':
        await presenter.endStream();
        await this.#delivery.postReply(runId, thread, outcome.message);
        for (const approval of outcome.cancelledApprovals) await this.#updateCard(approval);
        return true;
    }
  }

  async #startQueued(conversationId: string, thread: ThreadRef): Promise<void> {
    const runId = this.#deps.newId('run');
    const message = this.#deps.store.startNextQueuedRun({
      conversationId,
      runId,
      state: initialRunState(),
      audit: (queued) => [this.#runStarted(thread, conversationId, runId, queued.userId)],
    });
    if (message) {
      await this.#drive(
        runId,
        {
          teamId: thread.teamId,
          channelId: thread.channelId,
          threadTs: thread.threadTs,
          recipientUserId: message.userId,
          messageTs: message.messageTs,
        },
        conversationId,
      );
    }
  }

  async #updateCard(approval: ApprovalRecord): Promise<void> {
    try {
      await this.#deps.surface.updateApprovalCard(approval);
    } catch (error) {
      this.#deps.logger.warn('approval card update failed', {
        approvalId: approval.id,
        error: describeError(error),
      });
    }
  }

  #say(thread: ThreadRef, text: string): Promise<void> {
    return this.#delivery.say(thread, text);
  }

  #runStarted(thread: ThreadRef, conversationId: string, runId: string, userId: string) {
    return auditEvent('run.started', {
      at: this.#deps.clock.now(),
      actor: userId,
      teamId: thread.teamId,
      conversationId,
      runId,
      payload: { channelId: thread.channelId, threadTs: thread.threadTs },
    });
  }
}
