import { type ApprovalRecord, approvalScope } from '../approvals/approval.js';
import { auditEvent } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { SurfaceKind } from '../surfaces.js';
import { updateCard } from './card-updates.js';
import { isNotInstalled, nextAttemptAt } from './delivery.js';
import { droppedEvent } from './dropped-deliveries.js';
import type { LandedCardUpdates } from './landed-card-updates.js';
import { UndeliveredAnswer } from './run-presenter.js';
import type { Delivery, DeliveryOutbox, RecoveryScope } from './store-ports.js';
import type { CardLocation, CardPoster, CardUpdater, ThreadPoster, ThreadRef } from './surface-ports.js';

export interface ThreadDeliveryDeps {
  outbox: DeliveryOutbox;
  /** The card updates that landed, written off together (and at `close`). */
  landed: LandedCardUpdates;
  surface: ThreadPoster & CardPoster & CardUpdater;
  /** Whose threads this process posts in. */
  surfaceKind: SurfaceKind;
  clock: Clock;
  logger: Logger;
  /** The retry interval: a failing delivery is tried again after 1, 2, 4 … of them. */
  retryMs: number;
}

/**
 * Everything the bot must get into a thread even when Slack fails for a while: approval cards, the last
 * message of each run, and card updates Slack refused. Both are owed in the database from the transaction that makes them necessary until
 * Slack accepts them; a process takes one with a lease before posting, so however many processes retry, each
 * is posted once, and `retry` posts whatever is still owed, after an error, a restart or a dead process.
 */
export class ThreadDelivery {
  readonly #deps: ThreadDeliveryDeps;
  /** Posts under way with the record of them that follows, so a shutdown waits for both. */
  readonly #posting = new Set<Promise<void>>();
  #closed = false;

  constructor(deps: ThreadDeliveryDeps) {
    this.#deps = deps;
  }

  /**
   * At shutdown, before the database closes: nothing more is posted from here (what is owed stays owed, for
   * another process once this one's lease runs out), and posts under way are let finish with their record, up to
   * `boundMs`. Closing the database between a post and its record would leave it owed, posted twice.
   */
  async close(boundMs: number): Promise<void> {
    this.#closed = true;
    let timer: NodeJS.Timeout | undefined;
    const bound = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, boundMs);
    });
    await Promise.race([Promise.allSettled([...this.#posting]), bound]);
    clearTimeout(timer);
    await this.#deps.landed.flush();
  }

  /** Runs `post` unless closed, tracked until it has settled. */
  async #post(post: () => Promise<void>): Promise<void> {
    if (this.#closed) return;
    const posting = post();
    this.#posting.add(posting);
    try {
      await posting;
    } finally {
      this.#posting.delete(posting);
    }
  }

  /** Shows a change to a request on its card now; an update Slack refuses is owed and retried (`updateCard`). */
  updateCard(approval: ApprovalRecord): Promise<void> {
    const { surface, outbox, landed, clock, logger, retryMs } = this.#deps;
    return this.#post(() => updateCard({ surface, outbox, landed, clock, logger, retryMs }, approval));
  }

  /** Posts the cards still owed for these requests (in order) and stores their ts. */
  postCards(approvals: readonly ApprovalRecord[]): Promise<void> {
    return this.#post(async () => {
      const cards = await this.#deps.outbox.takeCards(approvals.map((approval) => approval.id));
      // A card taken here after a failed try may have been posted by it.
      for (const card of cards) if (!this.#closed) await this.#postCard(card, card.attempts > 0);
    });
  }

  /**
   * Posts a run's last message, owed (and leased to this process) since the run ended. `send` replaces the
   * plain post (a streamed answer is finished instead); a retry always posts the text owed.
   */
  postReply(runId: string, thread: ThreadRef, text: string, send?: () => Promise<void>): Promise<void> {
    return this.#post(() => this.#takeAndPostReply(runId, thread, text, send));
  }

  async #takeAndPostReply(
    runId: string,
    thread: ThreadRef,
    text: string,
    send: (() => Promise<void>) | undefined,
  ): Promise<void> {
    let mine: boolean;
    try {
      mine = await this.#deps.outbox.takeReply(runId);
    } catch (error) {
      // Still owed, and the next retry posts it; but a streamed answer shows in the thread already, where a retry
      // could not find it: it is finished and written off here, under the lease the run's end gave this process.
      this.#deps.logger.warn('reply could not be taken', {
        runId,
        streamed: !!send,
        error: describeError(error),
      });
      if (!send) return;
      mine = true;
    }
    const owedSince = this.#deps.clock.now();
    const reply = { kind: 'reply', runId, thread, text, attempts: 0, owedSince, shown: false } as const;
    if (mine) await this.#postReply(reply, { send });
  }

  /** Best effort: a notice that is not worth retrying. */
  async say(thread: ThreadRef, text: string): Promise<void> {
    if (this.#closed) return;
    try {
      await this.#deps.surface.postText(thread, text);
    } catch (error) {
      this.#deps.logger.error('message could not be posted', {
        channelId: thread.channelId,
        error: describeError(error),
      });
    }
  }

  /** Posts every card and reply owed in this surface's threads (or one conversation's) whose next try is due. */
  retry(scope: RecoveryScope = { surface: this.#deps.surfaceKind }): Promise<void> {
    return this.#post(() => this.#retryDue(scope));
  }

  async #retryDue(scope: RecoveryScope): Promise<void> {
    const due = await this.#deps.outbox.takeDue(scope, this.#deps.clock.now());
    for (const delivery of due) {
      // Closing: the rest stays owed, taken up again once this process's lease on them runs out.
      if (this.#closed) return;
      switch (delivery.kind) {
        case 'card':
          // Owed past its first try here: that try, or a process that stopped, may have posted it.
          await this.#postCard(delivery, true);
          break;
        case 'card_update':
          await this.#updateCard(delivery);
          break;
        case 'reply':
          // Owed past its first try here: what the thread already shows of it is not posted again.
          await this.#postReply(delivery, { again: true });
          break;
      }
    }
  }

  /** Renders an owed card update from the request's state now; one Slack refuses again stays owed. */
  async #updateCard(owed: Extract<Delivery, { kind: 'card_update' }>): Promise<void> {
    try {
      await this.#deps.surface.updateApprovalCard(owed.approval, owed.update);
      await this.#deps.outbox.cardsUpdated([{ approvalId: owed.approval.id, owedAt: owed.owedAt }]);
    } catch (error) {
      this.#deps.logger.warn('approval card update failed again; it will be retried', {
        approvalId: owed.approval.id,
        attempts: owed.attempts + 1,
        error: describeError(error),
      });
      await this.#giveBack(owed, {}, error);
    }
  }

  /**
   * Posts an owed card and records where it is. With `lookFirst` the card may be in its thread already: an
   * earlier try (here, or in a process that stopped) had Slack accept it but never recorded it. It is looked for
   * first and recorded where it is found, rather than posted twice.
   */
  async #postCard(card: Extract<Delivery, { kind: 'card' }>, lookFirst: boolean): Promise<void> {
    const { approval } = card;
    let found: CardLocation | undefined;
    let location: CardLocation;
    try {
      found = lookFirst ? await this.#findCard(approval) : undefined;
      location = found ?? (await this.#deps.surface.postApprovalCard(approval));
    } catch (error) {
      this.#deps.logger.error('approval card could not be posted; it stays pending and will be retried', {
        approvalId: approval.id,
        tool: approval.toolName,
        channelId: approval.channelId,
        error: describeError(error),
      });
      await this.#giveBack(card, { noticed: true }, error);
      if (card.noticed || isNotInstalled(error)) return;
      await this.say(
        approval,
        `I need an approval to run ${approval.toolName}, but I could not post the approval card. The request stays pending and I will keep trying to post it.`,
      );
      return;
    }
    try {
      await this.#deps.outbox.cardPosted(approval.id, location, [
        auditEvent('approval.card_posted', {
          at: this.#deps.clock.now(),
          ...approvalScope(approval),
          payload: { ...location, ...(found ? { found: true } : {}) },
        }),
      ]);
    } catch (error) {
      // In the thread but not recorded: still owed, and the next try finds it there instead of posting it again.
      this.#deps.logger.error('approval card was posted but not recorded; the next try records it', {
        approvalId: approval.id,
        messageTs: location.messageTs,
        error: describeError(error),
      });
      await this.#giveBack(card, {}, error);
    }
  }

  /** The card already in its thread, if any; a lookup that fails is no reason not to post (twice beats never). */
  async #findCard(approval: ApprovalRecord): Promise<CardLocation | undefined> {
    try {
      return await this.#deps.surface.adoptPostedCard?.(approval);
    } catch (error) {
      this.#deps.logger.warn('could not look for the approval card in its thread; posting it', {
        approvalId: approval.id,
        channelId: approval.channelId,
        error: describeError(error),
      });
      return undefined;
    }
  }

  /**
   * Posts a run's last message: `send` (a streamed answer finished) on a first try, else the text owed.
   * `again`: owed past a first try, so what the thread already shows of it is left out.
   */
  async #postReply(
    reply: Extract<Delivery, { kind: 'reply' }>,
    how: { send?: (() => Promise<void>) | undefined; again?: boolean },
  ): Promise<void> {
    const { surface } = this.#deps;
    const { runId } = reply;
    // Shown by an earlier try whose write-off failed: only written off (a streamed message cannot be found).
    let shown = reply.shown;
    try {
      if (!shown) {
        if (how.send) await how.send();
        else if (surface.postAnswer)
          await surface.postAnswer(reply.thread, reply.text, {
            runId,
            ...(how.again ? { owedSince: reply.owedSince } : {}),
          });
        else await surface.postText(reply.thread, reply.text);
        shown = true;
      }
      await this.#deps.outbox.replyPosted(runId);
    } catch (error) {
      this.#deps.logger.error(`reply could not be ${shown ? 'written off' : 'posted'}; it will be retried`, {
        runId: reply.runId,
        channelId: reply.thread.channelId,
        error: describeError(error),
      });
      // What was streamed is in the thread already: only the rest is owed.
      const rest = error instanceof UndeliveredAnswer ? { text: error.text } : {};
      await this.#giveBack(reply, shown ? { noticed: true } : rest, error);
    }
  }

  /** A failed delivery goes back to the outbox, to be tried later and later (never before Slack asked). */
  async #giveBack(
    delivery: Delivery,
    outcome: { text?: string; noticed?: boolean },
    failure: unknown,
  ): Promise<void> {
    const { clock, retryMs } = this.#deps;
    const retryAt = nextAttemptAt(clock.now(), delivery.attempts + 1, retryMs, failure);
    try {
      // The app was removed from the workspace: nothing owed there will ever be accepted.
      if (isNotInstalled(failure)) {
        await this.#deps.outbox.dropped(delivery, [droppedEvent(delivery, clock.now())]);
        this.#deps.logger.warn('a delivery was dropped: the app was removed from its workspace', {
          kind: delivery.kind,
          ...('approval' in delivery ? { approvalId: delivery.approval.id } : { runId: delivery.runId }),
        });
        return;
      }
      await this.#deps.outbox.failed(delivery, { retryAt, ...outcome });
    } catch (error) {
      // Still owed and still leased: once the lease runs out the next retry takes it again.
      this.#deps.logger.error('a failed delivery could not be given back', { error: describeError(error) });
    }
  }
}
