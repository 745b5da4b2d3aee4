/** Narrows an unknown JSON value to a plain object. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The value if it is a string, else `undefined`. */
export function stringOr(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}
