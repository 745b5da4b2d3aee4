/** Keys whose values never reach the audit log or the logs. */
const SECRET_KEY = /(token|password|passwd|secret|authorization|api[_-]?key|private[_-]?key|credential)/i;

/**
 * Counts of model tokens (`promptTokens`, `completion_tokens`, `max_tokens`, `token_count`, …) that the key
 * pattern above would take for credentials: kept when their value is a number, the only thing a count can be.
 */
const TOKEN_COUNT_KEY =
  /^((prompt|completion|total|input|output|reasoning|cached|max)_?tokens|tokens?_?count)$/i;

/** True for a key whose value is kept out of the audit log and the logs. */
export function isSecretKey(key: string, value: unknown): boolean {
  if (!SECRET_KEY.test(key)) return false;
  return !(typeof value === 'number' && Number.isFinite(value) && TOKEN_COUNT_KEY.test(key));
}

/** Values that look like Slack, OpenAI or cloud credentials, wherever they appear. */
const SECRET_VALUE =
  /\b(xox[abposrecd](?:\.xox[a-z])?-[A-Za-z0-9-]{8,}|xapp-[A-Za-z0-9-]{8,}|sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|AIza[0-9A-Za-z_-]{30,})\b/g;

/** The password of a URL such as `postgres://bot:PASSWORD@db.example.com/bot`. */
const URL_PASSWORD = /\b([a-z][a-z0-9+.-]*:\/\/[^\s:/@]+:)[^\s/@]+@/gi;

export const REDACTED = '[redacted]';

/** Replaces credential-looking substrings of a string. */
export function redactText(text: string): string {
  return text.replace(SECRET_VALUE, REDACTED).replace(URL_PASSWORD, `$1${REDACTED}@`);
}

/** A deep copy of a JSON value with secret keys and credential-looking strings redacted. */
export function redactValue(value: unknown, depth = 0): unknown {
  if (depth > 20) return REDACTED;
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      out[key] = isSecretKey(key, inner) ? REDACTED : redactValue(inner, depth + 1);
    }
    return out;
  }
  return value;
}

/** Arguments with secrets redacted, as JSON (or the raw text when they are not JSON). */
export function redactedArguments(raw: string, space?: number): string {
  try {
    return JSON.stringify(redactValue(JSON.parse(raw)), null, space);
  } catch {
    return String(redactValue(raw));
  }
}
