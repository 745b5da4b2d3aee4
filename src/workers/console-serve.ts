import type { ConsoleFromWorker, ConsoleToWorker, RelayedRequest } from './protocol.js';

/**
 * Chunks of an answer the worker sends ahead of the intake thread's writes: each `console-pull` (one chunk
 * written out to the client) lets one more go, so a slow client holds at most this many in memory.
 */
export const CONSOLE_CHUNKS_IN_FLIGHT = 4;

/** The console as the worker serving it calls it: a Fetch request and the client's address. */
export type ServeConsole = (request: Request, remoteAddress: string | undefined) => Promise<Response>;

/** Posts a message to the intake thread, handing over `transfer` (a chunk's bytes) instead of copying it. */
export type SendToIntake = (message: ConsoleFromWorker, transfer?: ArrayBuffer[]) => void;

interface Answer {
  /** Chunks the worker may still send before the intake thread asks for more. */
  credit: number;
  cancelled: boolean;
  /** Wakes the answer waiting for credit (or for its cancellation). */
  wake: (() => void) | undefined;
  body: ReadableStreamDefaultReader<Uint8Array> | undefined;
}

/**
 * The worker's end of the console relay (the intake's is console-relay.ts): answers each relayed request with
 * `serve` and streams the answer back, a few chunks ahead of the client at most; returns what takes the intake
 * thread's messages.
 */
export function consoleServer(serve: ServeConsole, send: SendToIntake): (message: ConsoleToWorker) => void {
  const answers = new Map<number, Answer>();
  const stream = async (id: number, request: RelayedRequest, answer: Answer): Promise<void> => {
    const response = await serve(toFetchRequest(request), request.remoteAddress);
    if (answer.cancelled) {
      await response.body?.cancel();
      return;
    }
    send({ kind: 'console-head', id, status: response.status, headers: headersOf(response.headers) });
    const body = response.body?.getReader();
    answer.body = body;
    while (body) {
      while (answer.credit === 0 && !answer.cancelled)
        await new Promise<void>((resolve) => {
          answer.wake = resolve;
        });
      if (answer.cancelled) return;
      const { done, value } = await body.read();
      if (done) break;
      if (answer.cancelled) return;
      if (value.byteLength === 0) continue;
      // A copy of its own, handed over whole: the chunk's buffer may be shared with other bytes.
      const bytes = value.slice();
      answer.credit -= 1;
      send({ kind: 'console-chunk', id, bytes }, [bytes.buffer]);
    }
    send({ kind: 'console-end', id });
  };
  return (message) => {
    const answer = answers.get(message.id);
    switch (message.kind) {
      case 'console-request': {
        const started: Answer = {
          credit: CONSOLE_CHUNKS_IN_FLIGHT,
          cancelled: false,
          wake: undefined,
          body: undefined,
        };
        answers.set(message.id, started);
        stream(message.id, message.request, started)
          .catch(() => {
            if (!started.cancelled) send({ kind: 'console-failed', id: message.id });
          })
          .finally(() => answers.delete(message.id));
        return;
      }
      case 'console-pull':
        if (!answer) return;
        answer.credit += 1;
        answer.wake?.();
        return;
      case 'console-cancel':
        if (!answer) return;
        answer.cancelled = true;
        answer.wake?.();
        // Ends the read in progress, and the export behind it.
        answer.body?.cancel().catch(() => undefined);
        return;
    }
  };
}

function toFetchRequest(request: RelayedRequest): Request {
  const init: RequestInit = {
    method: request.method,
    headers: request.headers.filter(([name]) => !name.startsWith(':')),
  };
  if (request.method !== 'GET' && request.method !== 'HEAD' && request.body) init.body = request.body;
  return new Request(request.url, init);
}

/** A response's headers as Node writes them: each name once, `set-cookie` with each cookie its own value. */
function headersOf(headers: Headers): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  headers.forEach((value, name) => {
    if (name !== 'set-cookie') out[name] = value;
  });
  const cookies = headers.getSetCookie();
  if (cookies.length > 0) out['set-cookie'] = cookies;
  return out;
}
