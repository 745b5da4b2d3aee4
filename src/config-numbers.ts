import { z } from 'zod';

/** How long a setting's value may be when quoted back in a problem. */
const QUOTED = 40;

/**
 * A setting that holds a whole number within bounds: digits only (no sign, decimals, exponent or hex, which
 * `Number` would accept), checked before it becomes a number, so a problem quotes what was written instead of
 * saying "received NaN".
 *
 * @example
 * wholeNumber({ min: 0, max: 65535 }) // PORT=abc: "must be a whole number from 0 to 65535, got 'abc'"
 */
export function wholeNumber({ min, max, unit }: { min: number; max?: number; unit?: string }) {
  const range = max === undefined ? `of at least ${min}` : `from ${min} to ${max}`;
  const expected = `must be a whole number${unit ? ` of ${unit}` : ''} ${range}`;
  return z.string().transform((raw, ctx) => {
    const text = raw.trim();
    const value = /^\d+$/.test(text) ? Number(text) : Number.NaN;
    if (Number.isSafeInteger(value) && value >= min && (max === undefined || value <= max)) return value;
    const quoted = raw.length > QUOTED ? `${raw.slice(0, QUOTED)}…` : raw;
    ctx.addIssue({ code: 'custom', message: `${expected}, got '${quoted}'` });
    return z.NEVER;
  });
}
