import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { RunHandedOver, RunStopped } from './ports.js';

/** The first wait after a refused commit; it doubles up to `MAX_WAIT_MS`. */
const FIRST_WAIT_MS = 100;
/** Short, so a commit lands within a moment of the database coming back, before the run's lease is taken over. */
const MAX_WAIT_MS = 2_000;

export interface StoreRetryOptions {
  logger: Logger;
  runId: string;
  /** How long to keep trying before the failure is thrown after all. */
  giveUpAfterMs: number;
}

/**
 * Runs `write` until the database takes it: for the commit that ends a run with an answer, whose text the
 * model has given (and a streamed answer has shown) already, so that a database outage delays the end of the
 * run instead of ending it in failure and asking the model again once the database is back. A run taken over
 * (`RunHandedOver`) or stopped (`RunStopped`) is not retried: those are answers, not failures.
 */
export async function untilStored<T>(write: () => Promise<T>, options: StoreRetryOptions): Promise<T> {
  const started = Date.now();
  let wait = FIRST_WAIT_MS;
  for (let attempt = 1; ; attempt += 1) {
    try {
      const stored = await write();
      if (attempt > 1) options.logger.info('the end of the run is stored', { runId: options.runId, attempt });
      return stored;
    } catch (error) {
      if (error instanceof RunHandedOver || error instanceof RunStopped) throw error;
      if (Date.now() - started >= options.giveUpAfterMs) throw error;
      options.logger.warn('the end of the run could not be stored; trying again', {
        runId: options.runId,
        attempt,
        error: describeError(error),
      });
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(wait * 2, MAX_WAIT_MS);
    }
  }
}
