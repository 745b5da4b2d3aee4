import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { OwedCardUpdates, ShownCardUpdate } from './store-ports.js';

/** How long landed updates are gathered before they are written off together. */
const GATHER_MS = 1_000;

/**
 * The card updates that landed, written off in one transaction a second (not one per decision, whose every
 * commit is a flush to disk): each was owed from the transaction of its change (`OwedCardUpdates`). One not
 * written off (the process stopped first, the write failed) is sent once more when its lease runs out: the card
 * is rendered again as it already is.
 */
export class LandedCardUpdates {
  readonly #outbox: Pick<OwedCardUpdates, 'cardsUpdated'>;
  readonly #logger: Logger;
  readonly #gatherMs: number;
  #landed = new Map<string, ShownCardUpdate>();
  #timer: NodeJS.Timeout | undefined;

  constructor(outbox: Pick<OwedCardUpdates, 'cardsUpdated'>, logger: Logger, gatherMs = GATHER_MS) {
    this.#outbox = outbox;
    this.#logger = logger;
    this.#gatherMs = gatherMs;
  }

  /** The update of this request's card landed, rendered after it was owed at `owedAt` (`owedCardUpdate`). */
  landed(approvalId: string, owedAt: number): void {
    this.#landed.set(`${approvalId}@${owedAt}`, { approvalId, owedAt });
    this.#timer ??= setTimeout(() => void this.flush(), this.#gatherMs).unref();
  }

  /** Writes off what landed so far (at shutdown, before the database closes, too). Never throws. */
  async flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#landed.size === 0) return;
    const shown = [...this.#landed.values()];
    this.#landed = new Map();
    try {
      await this.#outbox.cardsUpdated(shown);
    } catch (error) {
      this.#logger.warn('landed card updates could not be written off; they will be sent once more', {
        count: shown.length,
        error: describeError(error),
      });
    }
  }
}
