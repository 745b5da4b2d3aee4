import { ErrorCode, WebAPIRateLimitedError } from '@slack/web-api';
import { TryAgainLater } from '../conversations/delivery.js';
import { AppError } from '../errors.js';

/**
 * The `error` of a Slack Web API answer that said `ok: false` (`not_in_channel`, `invalid_auth`, …), as
 * `@slack/web-api` throws it (`WebAPIPlatformError`, `error.data.error`); undefined for any other failure.
 */
export function slackErrorCode(error: unknown): string | undefined {
  if (!(error instanceof Error) || !('data' in error)) return undefined;
  const data: unknown = error.data;
  if (typeof data !== 'object' || data === null || !('error' in data)) return undefined;
  return typeof data.error === 'string' ? data.error : undefined;
}

/**
 * A rate limit as the core understands it (`TryAgainLater`, Slack's `Retry-After` in ms), so an owed delivery
 * is not tried before Slack allows; any other failure as it is.
 */
export function withRetryAfter(error: unknown): unknown {
  if (!(error instanceof WebAPIRateLimitedError)) return error;
  return new TryAgainLater(Math.max(0, error.retryAfter) * 1000, { cause: error });
}

/**
 * A failure after which Slack may still have done what it was asked: no answer (a timeout, a broken connection)
 * or a server error. Slack's own refusals (`ok: false`) and rate limits say it did nothing.
 */
export function outcomeUnknown(error: unknown): boolean {
  if (!(error instanceof Error) || !('code' in error)) return false;
  return error.code === ErrorCode.RequestError || error.code === ErrorCode.HTTPError;
}

/**
 * Sends `post` once, with a client that does not retry by itself. When its outcome is unknown (`outcomeUnknown`)
 * Slack may have done it before the answer was lost: `shown` looks, and `post` is sent again only when it finds
 * nothing. Any other failure is thrown as it is.
 */
export async function postOnce<T>(post: () => Promise<T>, shown: () => Promise<T | undefined>): Promise<T> {
  try {
    return await post();
  } catch (error) {
    if (!outcomeUnknown(error)) throw error;
    return (await shown()) ?? (await post());
  }
}

/**
 * Whether Bolt refused a request because its workspace's installation could not be read (the database failed),
 * rather than because there is none: such a request deserves Slack's retry.
 */
export function installationUnreadable(error: unknown): boolean {
  if (!(error instanceof Error) || !('code' in error) || error.code !== 'slack_bolt_authorization_error')
    return false;
  for (let cause: unknown = error, depth = 0; cause instanceof Error && depth < 5; depth += 1) {
    if (cause instanceof AppError && cause.code === 'slack.not_installed') return false;
    cause = 'original' in cause && cause.original instanceof Error ? cause.original : cause.cause;
  }
  return true;
}
