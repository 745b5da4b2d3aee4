import { z } from 'zod';
import { AppError } from '../errors.js';
import type { CardUpdate } from './surface-ports.js';

/** What the bot may owe a thread until Slack accepts it. */
export const DELIVERY_KINDS = ['card', 'reply', 'card_update'] as const;
export type DeliveryKind = (typeof DELIVERY_KINDS)[number];

/**
 * A surface's refusal that says when to try again (Slack's 429 and its `Retry-After`): a delivery that failed
 * with it is not tried before then.
 */
export class TryAgainLater extends AppError {
  readonly retryAfterMs: number;

  constructor(retryAfterMs: number, options?: ErrorOptions) {
    super('surface.rate_limited', `rate limited; try again in ${retryAfterMs} ms`, options);
    this.retryAfterMs = retryAfterMs;
  }
}

/**
 * A surface's refusal because the app is no longer installed where the delivery goes (uninstalled, or its
 * tokens revoked): nothing was sent, and nothing ever will be with that installation, so what is owed there is
 * dropped instead of tried again.
 */
export class NotInstalled extends AppError {
  readonly teamId: string;

  constructor(teamId: string, message: string, options?: ErrorOptions) {
    super('slack.not_installed', message, options);
    this.teamId = teamId;
  }
}

/** Whether `failure`, or what it was caused by, says the app is no longer installed there. */
export function isNotInstalled(failure: unknown): boolean {
  for (let cause = failure, depth = 0; cause instanceof Error && depth < 5; depth += 1) {
    if (cause instanceof NotInstalled) return true;
    cause = cause.cause;
  }
  return false;
}

/** The rate limit behind a failure, itself or one of its causes. */
function tryAgainLater(failure: unknown): TryAgainLater | undefined {
  for (let cause = failure, depth = 0; cause instanceof Error && depth < 5; depth += 1) {
    if (cause instanceof TryAgainLater) return cause;
    cause = cause.cause;
  }
  return undefined;
}

/** A failing delivery is next tried after 1, 2, 4 … retry intervals, at most this many (an hour at 30 s). */
const MAX_INTERVALS_BETWEEN_TRIES = 120;

/**
 * When a delivery that failed `attempts` times in all is tried next: the wait doubles with each failure, so a
 * channel Slack refuses for good (archived, deleted) is not hammered, while a passing outage is still healed.
 */
export function nextAttemptAt(now: number, attempts: number, intervalMs: number, failure?: unknown): number {
  const intervals = Math.min(2 ** Math.max(0, attempts - 1), MAX_INTERVALS_BETWEEN_TRIES);
  const asked = tryAgainLater(failure)?.retryAfterMs ?? 0;
  return now + Math.max(intervals * intervalMs, asked);
}

const cardLocationSchema = z.object({ channelId: z.string(), messageTs: z.string() });
const cardUpdateSchema = z.object({
  fallback: cardLocationSchema.optional(),
  approvers: z.array(z.string()).optional(),
  standing: z.boolean().optional(),
});

/** What an owed card update keeps of the change it shows, as stored. */
export function storedCardUpdate(update: CardUpdate): string {
  return JSON.stringify(update);
}

/** The stored `CardUpdate`; an unreadable one renders from the stored state alone. */
export function readCardUpdate(stored: string | null | undefined): CardUpdate {
  try {
    const parsed = cardUpdateSchema.safeParse(JSON.parse(stored ?? '{}'));
    if (!parsed.success) return {};
    const { fallback, approvers, standing } = parsed.data;
    return {
      ...(fallback ? { fallback } : {}),
      ...(approvers ? { approvers } : {}),
      ...(standing !== undefined ? { standing } : {}),
    };
  } catch {
    return {};
  }
}
