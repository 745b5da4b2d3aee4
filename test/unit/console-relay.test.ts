import { afterEach, describe, expect, it } from 'vitest';
import { type ConsoleRelay, createConsoleRelay } from '../../src/workers/console-relay.js';
import {
  CONSOLE_CHUNKS_IN_FLIGHT,
  consoleServer,
  type ServeConsole,
} from '../../src/workers/console-serve.js';
import type { ConsoleFromWorker, ConsoleToWorker } from '../../src/workers/protocol.js';
import { type LocalServer, listenLocal } from '../support/local-server.js';

/** A turn of the event loop: what reads a stream of chunks already queued is done by then. */
const turn = () => new Promise((resolve) => setImmediate(resolve));

/**
 * The intake's end and the worker's end of the console relay joined as a worker thread joins them (each message
 * cloned and delivered later), without a thread, in front of a real HTTP server.
 */
async function relayRig(serve: ServeConsole) {
  const state = { ready: true, outOfReach: false, posted: [] as ConsoleToWorker[] };
  let worker: (message: ConsoleToWorker) => void = () => undefined;
  const relay: ConsoleRelay = createConsoleRelay({
    ready: () => state.ready,
    outOfReach: () => state.outOfReach,
    post: (message) => {
      state.posted.push(message);
      setImmediate(() => worker(structuredClone(message)));
    },
  });
  worker = consoleServer(serve, (message) => setImmediate(() => relay.received(structuredClone(message))));
  const server = await listenLocal(async (req, res) => relay.handle(req, res));
  return { relay, state, server, url: `http://127.0.0.1:${server.port}` };
}

/** A body of `count` chunks (or endless), and a promise kept when its reader cancels it. */
function chunks(count = Number.POSITIVE_INFINITY) {
  let sent = 0;
  let cancelled: () => void = () => undefined;
  const whenCancelled = new Promise<void>((resolve) => {
    cancelled = resolve;
  });
  const body = new ReadableStream<Uint8Array>(
    {
      pull(controller) {
        if (sent >= count) return controller.close();
        sent += 1;
        controller.enqueue(new TextEncoder().encode(`chunk ${sent}\n`));
      },
      cancel: () => cancelled(),
    },
    { highWaterMark: 0 },
  );
  return { body, whenCancelled, sent: () => sent };
}

describe('console relay between the intake thread and the worker serving the console', () => {
  let server: LocalServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it('relays the method, URL, headers, body and client address; answers with the status, headers and body', async () => {
    const seen: { method: string; path: string; header: string | null; body: string; address?: string }[] =
      [];
    const rig = await relayRig(async (request, address) => {
      seen.push({
        method: request.method,
        path: new URL(request.url).pathname + new URL(request.url).search,
        header: request.headers.get('x-asked'),
        body: await request.text(),
        ...(address ? { address } : {}),
      });
      const headers = new Headers([
        ['set-cookie', 'a=1; Path=/console'],
        ['set-cookie', 'b=2; Path=/console'],
        ['x-answer', 'yes'],
      ]);
      return new Response('made', { status: 201, headers });
    });
    server = rig.server;
    const answer = await fetch(`${rig.url}/console/api/thing?x=1`, {
      method: 'POST',
      headers: { 'x-asked': 'please' },
      body: 'the body',
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.getSetCookie()).toEqual(['a=1; Path=/console', 'b=2; Path=/console']);
    expect(answer.headers.get('x-answer')).toBe('yes');
    expect(await answer.text()).toBe('made');
    expect(seen).toEqual([
      {
        method: 'POST',
        path: '/console/api/thing?x=1',
        header: 'please',
        body: 'the body',
        address: '127.0.0.1',
      },
    ]);
  });

  it('a body over 256 KB gets 413 without reaching the console, announced or streamed', async () => {
    let served = 0;
    const rig = await relayRig(async () => {
      served += 1;
      return new Response('served');
    });
    server = rig.server;
    const big = new Uint8Array(256 * 1024 + 1);
    const announced = await fetch(`${rig.url}/console/api/x`, { method: 'POST', body: big });
    expect(announced.status).toBe(413);
    expect(await announced.json()).toEqual({
      error: { code: 'too_large', message: 'The request body is too large.' },
    });
    const streamed = await fetch(`${rig.url}/console/api/x`, {
      method: 'POST',
      body: new ReadableStream({
        start(controller) {
          for (let i = 0; i < 5; i += 1) controller.enqueue(new Uint8Array(64 * 1024));
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    expect(served).toBe(0);
    const small = await fetch(`${rig.url}/console/api/x`, {
      method: 'POST',
      body: new Uint8Array(256 * 1024),
    });
    expect(small.status).toBe(200);
    expect(served).toBe(1);
  });

  it('the worker sends a few chunks ahead of the intake, one more for each written out, and stops on cancel', async () => {
    const answer = chunks(100);
    const sent: ConsoleFromWorker[] = [];
    let arrived: () => void = () => undefined;
    const serveConsole = consoleServer(
      async () => new Response(answer.body),
      (message) => {
        sent.push(message);
        arrived();
      },
    );
    const chunkCount = () => sent.filter((m) => m.kind === 'console-chunk').length;
    const until = (count: number) =>
      new Promise<void>((resolve) => {
        arrived = () => {
          if (chunkCount() >= count) resolve();
        };
        arrived();
      });
    serveConsole({
      kind: 'console-request',
      id: 7,
      request: {
        method: 'GET',
        url: 'http://x/console',
        headers: [],
        remoteAddress: undefined,
        body: undefined,
      },
    });
    await until(CONSOLE_CHUNKS_IN_FLIGHT);
    await turn();
    expect(sent[0]).toMatchObject({ kind: 'console-head', id: 7, status: 200 });
    expect(chunkCount()).toBe(CONSOLE_CHUNKS_IN_FLIGHT);
    serveConsole({ kind: 'console-pull', id: 7 });
    await until(CONSOLE_CHUNKS_IN_FLIGHT + 1);
    await turn();
    expect(chunkCount()).toBe(CONSOLE_CHUNKS_IN_FLIGHT + 1);
    serveConsole({ kind: 'console-cancel', id: 7 });
    await answer.whenCancelled;
    expect(sent.some((m) => m.kind === 'console-end' || m.kind === 'console-failed')).toBe(false);
  });

  it('a client that disconnects mid-answer cancels the stream in the worker; later requests are answered', async () => {
    const endless = chunks();
    const rig = await relayRig(async (request) =>
      new URL(request.url).pathname === '/console/export' ? new Response(endless.body) : new Response('fine'),
    );
    server = rig.server;
    const leaving = new AbortController();
    const answer = await fetch(`${rig.url}/console/export`, { signal: leaving.signal });
    const reader = answer.body?.getReader();
    expect(new TextDecoder().decode((await reader?.read())?.value)).toContain('chunk 1');
    leaving.abort();
    await endless.whenCancelled;
    expect(rig.state.posted.some((m) => m.kind === 'console-cancel')).toBe(true);
    expect(await (await fetch(`${rig.url}/console/other`)).text()).toBe('fine');
  });

  it('the worker ending fails what it was answering: 503 before the head (JSON for the API, a page else), a cut connection after', async () => {
    const started = chunks();
    const rig = await relayRig(async (request) =>
      new URL(request.url).pathname === '/console/streaming'
        ? new Response(started.body)
        : new Promise<Response>(() => undefined),
    );
    server = rig.server;
    const waitingApi = fetch(`${rig.url}/console/api/never`);
    const waitingPage = fetch(`${rig.url}/console/never`);
    const streaming = await fetch(`${rig.url}/console/streaming`);
    const reader = streaming.body?.getReader();
    await reader?.read();
    rig.relay.lost();
    const failed = await waitingApi;
    expect(failed.status).toBe(503);
    expect(failed.headers.get('retry-after')).toBe('1');
    expect(((await failed.json()) as { error: { code: string } }).error.code).toBe('unavailable');
    const page = await waitingPage;
    expect(page.status).toBe(503);
    expect(page.headers.get('content-type')).toContain('text/html');
    expect(page.headers.get('content-security-policy')).toBe("default-src 'none'");
    expect(await page.text()).toContain('starting again');
    await expect(
      (async () => {
        for (;;) if ((await reader?.read())?.done) return 'ended';
      })(),
    ).rejects.toThrow();
  });

  it('a console that throws answers 502; while no worker is ready, 503 with Retry-After', async () => {
    const rig = await relayRig(async () => {
      throw new TypeError('broken page');
    });
    server = rig.server;
    expect((await fetch(`${rig.url}/console`)).status).toBe(502);
    rig.state.ready = false;
    const starting = await fetch(`${rig.url}/console`);
    expect(starting.status).toBe(503);
    expect(starting.headers.get('retry-after')).toBe('1');
    expect(rig.state.posted.filter((m) => m.kind === 'console-request')).toHaveLength(1);
  });

  it('a client kept out of the console gets 404 from the intake, with a body too large or no worker ready', async () => {
    const rig = await relayRig(async () => new Response('served'));
    server = rig.server;
    rig.state.outOfReach = true;
    const big = await fetch(`${rig.url}/console/api/x`, { method: 'POST', body: new Uint8Array(300 * 1024) });
    expect(big.status).toBe(404);
    rig.state.ready = false;
    expect((await fetch(`${rig.url}/console`)).status).toBe(404);
    expect(rig.state.posted).toEqual([]);
  });
});
