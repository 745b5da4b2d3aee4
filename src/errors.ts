/**
 * The stable codes of the errors the product raises. Callers and tests match on the code, people read the
 * message.
 */
export type ErrorCode =
  // The model service answered 429 after the client's own retries.
  | 'model.rate_limited'
  // The model service could not be reached or answered 5xx.
  | 'model.unavailable'
  // The model service did not answer in time.
  | 'model.timeout'
  // The connection to the model broke off in the middle of its answer.
  | 'model.interrupted'
  // The model service sent a response that could not be read.
  | 'model.bad_response'
  // The request was longer than the model's context, even with the conversation's older part summarised.
  | 'model.too_long'
  // The model service refused the request (4xx other than 429).
  | 'model.rejected'
  // Slack (or another surface) asked to be tried again later (HTTP 429 with Retry-After).
  | 'surface.rate_limited'
  // Slack answered a post without the message's ts, so the message cannot be updated later.
  | 'surface.no_message_ts'
  // A message Slack was asked to post was not posted.
  | 'surface.not_posted'
  // Part of an answer that Slack accepted neither streamed nor posted: it stays owed to the thread.
  | 'surface.undelivered_answer'
  // The database cannot be opened or migrated at start-up.
  | 'database.unavailable'
  // The database engine answered a query or a write in a shape the store does not expect.
  | 'database.unexpected_answer'
  // A row the store inserted did not come back.
  | 'database.not_stored'
  // An audit event was written outside a write transaction.
  | 'database.audit_outside_write'
  // The description of the tables names an index on a column of another table (a mistake in src/db/schema/).
  | 'database.invalid_schema'
  // The app has no stored installation for the workspace (or organisation) a Slack call is for.
  | 'slack.not_installed'
  // A stored installation cannot be decrypted with the configured keys, or was changed after it was stored.
  | 'slack.installation_unreadable'
  // A workspace's rotating token could not be refreshed (Slack refused its refresh token, or did not answer).
  | 'slack.token_refresh_failed'
  // `MCP_SERVERS_FILE` is invalid.
  | 'config.mcp_servers_file'
  // `AGENTS_FILE` is invalid.
  | 'config.agents_file'
  // `APPROVAL_POLICY_FILE` is invalid.
  | 'config.policy_file'
  // A conversation the caller named is not stored.
  | 'conversation.not_found'
  // A run the caller named is not stored.
  | 'run.not_found'
  // This process no longer holds the run's lease: another process drives it now.
  | 'run.handed_over'
  // A stored run state contradicts itself (a nested agent's frame without the call that started it).
  | 'run.invalid_state'
  // Someone asked to stop the run while it was being driven.
  | 'run.stopped'
  // An approval the caller named is not stored.
  | 'approval.not_found'
  // An approval changed under a transaction that had locked it.
  | 'approval.changed_concurrently'
  // A call was to be settled while its approval was still pending.
  | 'approval.still_pending'
  // A tool is declared wrongly (invalid name, registered twice, listed under another name).
  | 'tool.invalid_definition'
  // A call names a tool that is not registered.
  | 'tool.unknown'
  // A tool was called with an argument it cannot use.
  | 'tool.invalid_argument'
  // An MCP server answered a tool call with an error.
  | 'tool.failed';

/**
 * The one error type for infrastructure failures and bugs. Expected outcomes (a click from someone who may not
 * decide, an approval already decided) are returned as values, never thrown.
 *
 * A plain `AppError` is named `Error`, a subclass by its class: `name: message` is what the model reads as a
 * tool's failure and what the audit log and the logs keep, and those texts stay as they were before codes.
 */
export class AppError extends Error {
  readonly code: ErrorCode;

  constructor(code: ErrorCode, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = new.target === AppError ? 'Error' : new.target.name;
  }
}

/** Narrows an unknown caught value to a short, log-safe description. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === 'string' ? error : 'unknown error';
}
