import type { IncomingMessage, ServerResponse } from 'node:http';
import { BODY_TOO_LARGE, CONSOLE_BODY_LIMIT } from '../console/console-limits.js';
import type { ConsoleFromWorker, ConsoleToWorker, RelayedRequest } from './protocol.js';

/** The worker serving the console, as the relay sees it. */
export interface ConsoleWorkerPort {
  /** Whether it is started and ready for requests. */
  ready(): boolean;
  post(message: ConsoleToWorker): void;
  /** Whether a client at this address is kept out of the console (see console-reach.ts). */
  outOfReach(remoteAddress: string | undefined): boolean;
}

/**
 * The intake thread's end of the console relay: the thread that acks Slack's requests only reads each console
 * request and writes the answer the worker streams back (see console-serve.ts for the worker's end), so a slow
 * console page never holds an ack up.
 */
export interface ConsoleRelay {
  /** The HTTP handler for every request under `/console`. */
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** A message of the worker's about a relayed request. */
  received(message: ConsoleFromWorker): void;
  /** The worker ended (it is started again): the answers it had in progress fail with a 503. */
  lost(): void;
}

interface Relayed {
  res: ServerResponse;
  /** Asked of the JSON API (answered in JSON), else of a page (answered with a page). */
  api: boolean;
}

export function createConsoleRelay(worker: ConsoleWorkerPort): ConsoleRelay {
  let lastId = 0;
  const open = new Map<number, Relayed>();
  const relay = (req: IncomingMessage, res: ServerResponse, body: Uint8Array | undefined) => {
    if (res.destroyed) return;
    if (!worker.ready()) return refuse(res, isApi(req), 503, STARTING);
    lastId += 1;
    const id = lastId;
    open.set(id, { res, api: isApi(req) });
    // Closed before its end was written: the client went away, and the worker stops the answer.
    res.on('close', () => {
      if (open.delete(id)) worker.post({ kind: 'console-cancel', id });
    });
    worker.post({ kind: 'console-request', id, request: relayedRequest(req, body) });
  };
  const fail = (id: number, status: 502 | 503, error: ConsoleError) => {
    const relayed = open.get(id);
    if (!relayed) return;
    open.delete(id);
    if (relayed.res.headersSent) relayed.res.destroy();
    else refuse(relayed.res, relayed.api, status, error);
  };
  return {
    handle(req, res) {
      // Answered here as the console answers it, so that neither a body too large nor a worker starting
      // tells a client kept out that there is a console.
      if (worker.outOfReach(req.socket.remoteAddress)) {
        req.resume();
        res.writeHead(404, { 'content-type': 'text/plain; charset=UTF-8' }).end('Not found');
        return;
      }
      if (!worker.ready()) {
        req.resume();
        return refuse(res, isApi(req), 503, STARTING);
      }
      // A client that goes away mid-body is seen by `readBody`; the error it raises must not end the process.
      req.on('error', () => undefined);
      void readBody(req).then((body) => {
        if (body === 'closed') return res.destroy();
        if (body === 'too-large') {
          // The rest is read and dropped, not kept, so the client gets the answer; then the connection ends.
          req.resume();
          return json(res, 413, BODY_TOO_LARGE, { connection: 'close' });
        }
        relay(req, res, body);
      });
    },
    received(message) {
      const relayed = open.get(message.id);
      if (!relayed) return;
      const { res } = relayed;
      switch (message.kind) {
        case 'console-head':
          res.writeHead(message.status, message.headers);
          return;
        case 'console-chunk': {
          const pull = () => {
            if (open.has(message.id)) worker.post({ kind: 'console-pull', id: message.id });
          };
          if (res.write(message.bytes)) pull();
          else res.once('drain', pull);
          return;
        }
        case 'console-end':
          open.delete(message.id);
          res.end();
          return;
        case 'console-failed':
          fail(message.id, 502, FAILED);
          return;
      }
    },
    lost() {
      for (const id of [...open.keys()]) fail(id, 503, STOPPED);
    },
  };
}

interface ConsoleError {
  code: string;
  message: string;
}

const FAILED = { code: 'unavailable', message: 'The console stopped answering; try again.' };
const STARTING = { code: 'starting', message: 'The console is starting; try again in a moment.' };
const STOPPED = {
  code: 'unavailable',
  message: 'The console stopped answering and is starting again; try again in a moment.',
};

const isApi = (req: IncomingMessage) => (req.url ?? '').startsWith('/console/api/');

/**
 * A request the console's worker did not answer: 503 while it starts, or for those it was answering when it
 * ended (it is started again), 502 when its answer failed. JSON for the API, a page saying so for a browser
 * (fixed text only, under the strictest policy, as it needs nothing).
 */
function refuse(res: ServerResponse, api: boolean, status: 502 | 503, error: ConsoleError): void {
  const again: Record<string, string> = status === 503 ? { 'retry-after': '1' } : {};
  if (api) {
    json(res, status, { error }, again);
    return;
  }
  res
    .writeHead(status, {
      'content-type': 'text/html; charset=UTF-8',
      'content-security-policy': "default-src 'none'",
      ...again,
    })
    .end(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console unavailable</title></head><body><h1>Console unavailable</h1><p>${error.message}</p></body></html>`,
    );
}

function json(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/**
 * The request's body, whole (none for GET and HEAD); `too-large` as soon as it passes the console's limit,
 * `closed` when the client went away first.
 */
function readBody(req: IncomingMessage): Promise<Uint8Array | undefined | 'too-large' | 'closed'> {
  if (req.method === 'GET' || req.method === 'HEAD') {
    req.resume();
    return Promise.resolve(undefined);
  }
  if (Number(req.headers['content-length'] ?? 0) > CONSOLE_BODY_LIMIT) return Promise.resolve('too-large');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > CONSOLE_BODY_LIMIT) {
        stop();
        resolve('too-large');
      } else chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks));
    };
    const onClose = () => {
      stop();
      resolve('closed');
    };
    const stop = () => {
      req.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onClose);
    };
    req.on('data', onData).on('end', onEnd).on('close', onClose).on('error', onClose);
  });
}

function relayedRequest(req: IncomingMessage, body: Uint8Array | undefined): RelayedRequest {
  const headers: [string, string][] = [];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
    headers.push([req.rawHeaders[i] ?? '', req.rawHeaders[i + 1] ?? '']);
  return {
    method: req.method ?? 'GET',
    url: `http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`,
    headers,
    remoteAddress: req.socket.remoteAddress,
    body,
  };
}
