import { setTimeout as sleep } from 'node:timers/promises';
import { APIError } from 'openai';

/** Error codes of a connection that broke after the server began to answer (undici, Node's sockets). */
const BROKEN_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);

function codeOf(error: Error): unknown {
  return 'code' in error ? error.code : undefined;
}

/**
 * Whether `error` is the connection to the model breaking off in the middle of a response (a reset socket
 * while the body or the stream was being read: undici's `TypeError: terminated`). The openai SDK retries
 * failures before the response starts (connection refused, 429, 5xx, timeouts) itself and throws those as
 * `APIError`s; a break after HTTP 200 reaches us unretried.
 */
export function isBrokenOff(error: unknown): boolean {
  if (error instanceof APIError || !(error instanceof Error)) return false;
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth += 1) {
    if (current.name === 'AbortError') return false;
    const code = codeOf(current);
    if (typeof code === 'string' && BROKEN_CONNECTION.has(code)) return true;
    current = current.cause;
  }
  return error instanceof TypeError && error.message === 'terminated';
}

/** The wait before retry `n` (1, 2, …) of a broken-off answer: the SDK's own schedule (0.5 s doubling, at most 8 s, up to 25 % less). */
export function retryDelayMs(n: number): number {
  const base = Math.min(500 * 2 ** (n - 1), 8000);
  return Math.round(base * (1 - Math.random() * 0.25));
}

/** Waits `ms`, or less when `signal` aborts (the caller then sees the signal aborted). */
export async function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  await sleep(ms, undefined, signal ? { signal } : undefined).catch(() => undefined);
}
