/** The value of `T` once falsy values are removed. */
export type Truthy<T> = Exclude<T, false | 0 | 0n | '' | null | undefined>;

export interface WaitOptions {
  /** Give up after this long. Default 5000 ms. */
  timeoutMs?: number;
  /** Pause between attempts. Default 5 ms. */
  intervalMs?: number;
  /** Text of the error thrown on timeout. */
  message?: string;
}

function isTruthy<T>(value: T): value is Truthy<T> {
  return Boolean(value);
}

/**
 * Polls `fn` until it returns (or resolves to) a truthy value and resolves with that value.
 * An exception thrown by `fn` counts as "not yet"; if the wait times out, the last one is attached as `cause`.
 *
 * @example
 * const row = await waitUntil(() => db.select().from(approvals).get(), { message: 'approval row never stored' });
 */
export async function waitUntil<T>(fn: () => T | Promise<T>, options: WaitOptions = {}): Promise<Truthy<T>> {
  const { timeoutMs = 5000, intervalMs = 5 } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await fn();
      if (isTruthy(value)) return value;
      lastError = undefined;
    } catch (error: unknown) {
      lastError = error;
    }
    if (Date.now() >= deadline) {
      const message = options.message ?? `waitUntil: condition not met within ${timeoutMs} ms`;
      throw new Error(message, lastError === undefined ? undefined : { cause: lastError });
    }
    await sleep(intervalMs);
  }
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
