/** The largest request body the console takes (a pasted policy, edited arguments), in bytes. */
export const CONSOLE_BODY_LIMIT = 256 * 1024;

/** The console's JSON error for a body over `CONSOLE_BODY_LIMIT` (status 413). */
export const BODY_TOO_LARGE = {
  error: { code: 'too_large', message: 'The request body is too large.' },
} as const;
