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
