import type { Clock } from '../agent/ports.js';
import type { ApprovalRecord } from '../approvals/approval.js';
import { auditEvent } from '../audit/audit-event.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ConversationStore, ThreadRef, ThreadSurface } from './ports.js';
import { UndeliveredAnswer } from './run-presenter.js';

/** A failing delivery is next tried after 1, 2, 4 … retry rounds, at most this many (an hour at 30 s). */
const MAX_ROUNDS_BETWEEN_TRIES = 120;

export interface ThreadDeliveryDeps {
  store: ConversationStore;
  surface: ThreadSurface;
  clock: Clock;
  logger: Logger;
}

/**
 * Everything the bot must get into a thread even when Slack fails for a while: approval cards and the last
 * message of each run. Both are remembered in the database until Slack accepts them (a card until its ts is
 * stored, a reply until it is cleared), and `retry` posts whatever is still owed, after an error or a restart.
 * Deliveries in flight are tracked so a retry never posts the same card or reply twice from one process.
 */
export class ThreadDelivery {
  readonly #deps: ThreadDeliveryDeps;
  readonly #inFlight = new Set<string>();
  /** Approvals whose thread was already told that the card could not be posted. */
  readonly #noticed = new Set<string>();
  /** Deliveries that failed on retry, and the retry round to try each again in. */
  readonly #backoff = new Map<string, { failures: number; nextRound: number }>();
  #round = 0;

  constructor(deps: ThreadDeliveryDeps) {
    this.#deps = deps;
  }

  /** Posts the cards (in order) and stores their ts; a card that fails stays owed until `retry`. */
  async postCards(approvals: readonly ApprovalRecord[]): Promise<void> {
    // Read again: a retry may have posted a card meanwhile, or someone decided the request from App Home.
    const wanted = new Set(approvals.map((approval) => approval.id));
    const owed = this.#deps.store.approvalsWithoutCard().filter((approval) => wanted.has(approval.id));
    // Claimed together and at once, so a retry running meanwhile never posts one of them a second time.
    const mine = this.#claim(owed, (approval) => `card:${approval.id}`);
    for (const approval of mine) {
      try {
        await this.#postCard(approval);
      } finally {
        this.#inFlight.delete(`card:${approval.id}`);
      }
    }
  }

  /**
   * Posts a run's last message; it is kept in the database until Slack accepts it. `send` replaces the plain
   * post (a streamed answer is finished instead); a retry always posts `text` whole.
   */
  async postReply(runId: string, thread: ThreadRef, text: string, send?: () => Promise<void>): Promise<void> {
    const [mine] = this.#claim([runId], (id) => `reply:${id}`);
    if (!mine) return;
    const { store, surface } = this.#deps;
    try {
      store.setPendingReply(runId, text);
      if (send) await send();
      else if (surface.postAnswer) await surface.postAnswer(thread, text);
      else await surface.postText(thread, text);
      store.setPendingReply(runId, null);
    } catch (error) {
      // What was streamed is in the thread already: only the rest is owed.
      if (error instanceof UndeliveredAnswer) store.setPendingReply(runId, error.text);
      this.#deps.logger.error('reply could not be posted; it will be retried', {
        runId,
        channelId: thread.channelId,
        error: describeError(error),
      });
    } finally {
      this.#inFlight.delete(`reply:${runId}`);
    }
  }

  /** Best effort: a notice that is not worth retrying. */
  async say(thread: ThreadRef, text: string): Promise<void> {
    try {
      await this.#deps.surface.postText(thread, text);
    } catch (error) {
      this.#deps.logger.error('message could not be posted', {
        channelId: thread.channelId,
        error: describeError(error),
      });
    }
  }

  /**
   * Posts every card and reply still owed in the threads `only` accepts. Each one that keeps failing is tried
   * in fewer and fewer rounds (every round, then every 2nd, 4th … up to every 120th), so a channel Slack
   * refuses for good (archived, deleted) is not hammered, while a passing outage is still healed.
   */
  async retry(only: (thread: ThreadRef) => boolean = () => true): Promise<void> {
    const { store } = this.#deps;
    this.#round += 1;
    const due = (key: string) => (this.#backoff.get(key)?.nextRound ?? 0) <= this.#round;
    const cards = store
      .approvalsWithoutCard()
      .filter((approval) => only(approval) && due(`card:${approval.id}`));
    await this.postCards(cards);
    for (const approval of cards)
      this.#track(
        `card:${approval.id}`,
        store.approvalsWithoutCard().some((a) => a.id === approval.id),
      );
    const owed = store.pendingReplies().flatMap((pending) => {
      const thread = store.thread(pending.conversationId);
      return thread && only(thread) && due(`reply:${pending.runId}`) ? [{ ...pending, thread }] : [];
    });
    for (const pending of this.#claim(owed, (p) => `reply:${p.runId}`)) {
      this.#inFlight.delete(`reply:${pending.runId}`);
      await this.postReply(pending.runId, pending.thread, pending.text);
      this.#track(
        `reply:${pending.runId}`,
        store.pendingReplies().some((p) => p.runId === pending.runId),
      );
    }
  }

  /** After a retry: forget a delivery that went through, push a failing one's next attempt further out. */
  #track(key: string, stillOwed: boolean): void {
    if (!stillOwed) {
      this.#backoff.delete(key);
      return;
    }
    const failures = (this.#backoff.get(key)?.failures ?? 0) + 1;
    const rounds = Math.min(2 ** (failures - 1), MAX_ROUNDS_BETWEEN_TRIES);
    this.#backoff.set(key, { failures, nextRound: this.#round + rounds });
  }

  #claim<T>(items: readonly T[], key: (item: T) => string): T[] {
    const mine = items.filter((item) => !this.#inFlight.has(key(item)));
    for (const item of mine) this.#inFlight.add(key(item));
    return mine;
  }

  async #postCard(approval: ApprovalRecord): Promise<void> {
    try {
      const { channelId, messageTs } = await this.#deps.surface.postApprovalCard(approval);
      this.#deps.store.setCardMessage(approval.id, channelId, messageTs, [
        auditEvent('approval.card_posted', {
          at: this.#deps.clock.now(),
          teamId: approval.teamId,
          conversationId: approval.conversationId,
          runId: approval.runId,
          approvalId: approval.id,
          payload: { channelId, messageTs },
        }),
      ]);
      this.#noticed.delete(approval.id);
    } catch (error) {
      this.#deps.logger.error('approval card could not be posted; it stays pending and will be retried', {
        approvalId: approval.id,
        tool: approval.toolName,
        channelId: approval.channelId,
        error: describeError(error),
      });
      if (this.#noticed.has(approval.id)) return;
      this.#noticed.add(approval.id);
      await this.say(
        approval,
        `I need an approval to run ${approval.toolName}, but I could not post the approval card. The request stays pending and I will keep trying to post it.`,
      );
    }
  }
}
