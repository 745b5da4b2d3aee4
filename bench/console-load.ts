import { get } from 'node:http';
import type { ConsoleClient } from '../test/support/console-client.js';

/**
 * Sends one GET as a signed-in person on a connection of its own (closed after the answer) and reads the whole
 * body; resolves with the client-side time in ms. Kept-alive connections shared by several loops were reset
 * now and then on this busy machine as a request went out on them; a new connection on 127.0.0.1 costs little.
 */
export function timedGet(client: ConsoleClient, path: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = get(
      `${client.base}${path}`,
      { agent: false, headers: { cookie: client.cookie, connection: 'close' } },
      (res) => {
        res.on('data', () => {});
        res.once('error', reject);
        res.once('end', () => {
          const ms = performance.now() - started;
          if (res.statusCode === 200) resolve(ms);
          else reject(new Error(`GET ${path} answered ${res.statusCode}, not 200`));
        });
      },
    );
    request.once('error', (error) =>
      reject(new Error(`GET ${path} failed: ${error.message}`, { cause: error })),
    );
  });
}

/** `count` GETs of `pathOf(i)`, `concurrency` in flight at a time; the time of each in ms. */
export async function timeGets(
  client: ConsoleClient,
  pathOf: (i: number) => string,
  count: number,
  concurrency: number,
): Promise<number[]> {
  const times: number[] = [];
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      times.push(await timedGet(client, pathOf(i)));
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return times;
}

export interface ConsoleLoad {
  /** Stops after the requests in flight; resolves with how many were answered and over how long. */
  stop(): Promise<{ requests: number; seconds: number }>;
}

/**
 * Loads the console as people reading it would, until stopped: `lanes` loops at once, each asking in turn for
 * the decide page and the pending list (the two reads that look at the most rows).
 */
export function startConsoleLoad(
  client: ConsoleClient,
  lanes: number,
  paths: readonly string[],
): ConsoleLoad {
  let stopped = false;
  let requests = 0;
  const started = performance.now();
  const lane = async (offset: number) => {
    for (let i = offset; !stopped; i++) {
      await timedGet(client, paths[i % paths.length] ?? '/console');
      requests += 1;
    }
  };
  const running = Promise.all(Array.from({ length: lanes }, (_, i) => lane(i)));
  return {
    async stop() {
      stopped = true;
      await running;
      return { requests, seconds: (performance.now() - started) / 1000 };
    },
  };
}
