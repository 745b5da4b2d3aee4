import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { type ChainReader, type ChainVerdict, verifyChainInBatches } from './verify-chain.js';

/** A result of `verifyChain` over the whole log, and when it was read. */
export interface ChainCheckResult {
  verdict: ChainVerdict;
  checkedAt: number;
}

export interface ChainCheckDeps {
  /** The chain in sequence order, whole or a batch at a time (the audit query port's `chain`). */
  chain: ChainReader;
  clock: Clock;
  logger: Logger;
}

/** Events verified between two turns of the thread. */
const CHECK_BATCH = 500;

/** A page shows a verdict this old at most; past it, the next view starts a new check. */
export const CHAIN_CHECK_MAX_AGE_MS = 60_000;

/**
 * The verification state of the audit log for pages that cannot read a million events on each view: the same
 * `verifyChain` as `npm run audit -- verify`, run at most once a minute for views and on demand for a button,
 * one check at a time (callers asking meanwhile share it).
 */
export class ChainCheck {
  readonly #deps: ChainCheckDeps;
  #last: ChainCheckResult | undefined;
  #running: Promise<ChainCheckResult> | undefined;

  constructor(deps: ChainCheckDeps) {
    this.#deps = deps;
  }

  /**
   * The last result without waiting: undefined before the first check ends. A result older than a minute (or
   * none) starts a check in the background, which the next view shows.
   */
  latest(): ChainCheckResult | undefined {
    const last = this.#last;
    if (!last || this.#deps.clock.now() - last.checkedAt >= CHAIN_CHECK_MAX_AGE_MS)
      // The page shows the last verdict meanwhile; a failed read is tried again by the next view.
      this.#start().catch((error: unknown) =>
        this.#deps.logger.error('audit chain check failed', { error: describeError(error) }),
      );
    return last;
  }

  /** Checks now and answers when done; a check under way answers instead of a second one. */
  now(): Promise<ChainCheckResult> {
    return this.#start();
  }

  #start(): Promise<ChainCheckResult> {
    this.#running ??= this.#check().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #check(): Promise<ChainCheckResult> {
    const checkedAt = this.#deps.clock.now();
    // A batch at a time, letting the thread answer Slack between batches: a long log must not hold up an ack.
    // 500 events hold the thread about 20 ms here (100,000 events: at most 46 ms at once, against 4.5 s whole).
    const verdict = await verifyChainInBatches(
      this.#deps.chain,
      () => new Promise((r) => setImmediate(r)),
      CHECK_BATCH,
    );
    const result = { verdict, checkedAt };
    this.#last = result;
    return result;
  }
}
