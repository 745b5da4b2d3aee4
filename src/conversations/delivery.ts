/** What the bot may owe a thread until Slack accepts it. */
export const DELIVERY_KINDS = ['card', 'reply'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

/** A failing delivery is next tried after 1, 2, 4 … retry intervals, at most this many (an hour at 30 s). */
const MAX_INTERVALS_BETWEEN_TRIES = 120;

/**
 * When a delivery that failed `attempts` times in all is tried next: the wait doubles with each failure, so a
 * channel Slack refuses for good (archived, deleted) is not hammered, while a passing outage is still healed.
 */
export function nextAttemptAt(now: number, attempts: number, intervalMs: number): number {
  const intervals = Math.min(2 ** Math.max(0, attempts - 1), MAX_INTERVALS_BETWEEN_TRIES);
  return now + intervals * intervalMs;
}
