import { ErrorCode, WebAPIRateLimitedError } from '@slack/web-api';
import { TryAgainLater } from '../conversations/delivery.js';

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
