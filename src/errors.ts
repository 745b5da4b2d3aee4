/**
 * The one error type for infrastructure failures and bugs. Expected outcomes (a click from someone who may not
 * decide, an approval already decided) are returned as values, never thrown.
 */
export class AppError extends Error {
  readonly code: string;

  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = new.target.name;
  }
}

/** Narrows an unknown caught value to a short, log-safe description. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return `${error.name}: ${error.message}`;
  return typeof error === 'string' ? error : 'unknown error';
}
