import { Worker } from 'node:worker_threads';
import { z } from 'zod';
import { FORM_CONTENT_TYPE, slackSignature } from '../test/support/slack-requests.js';

export interface PreparedRequest {
  url: string;
  headers?: Record<string, string>;
  /** Absent: a GET. */
  body?: string;
}

export interface LoadGenerator {
  /** Sends every request at once; resolves with each response time in ms, in order. */
  fire(batch: PreparedRequest[]): Promise<number[]>;
  close(): Promise<void>;
}

/** A load generator on a worker thread; a non-2xx answer fails the batch. */
export function startLoadGenerator(): LoadGenerator {
  const worker = new Worker(new URL('./load-worker.mjs', import.meta.url));
  let pending: { done: (times: number[]) => void; fail: (error: Error) => void } | undefined;
  worker.on('message', (message: unknown) => {
    const times = z.array(z.number()).parse(message);
    const bad = times.find((t) => t < 0);
    if (bad !== undefined) pending?.fail(new Error(`a request was answered with HTTP ${-bad}`));
    else pending?.done(times);
    pending = undefined;
  });
  worker.on('error', (error) => pending?.fail(error));
  return {
    fire(batch) {
      if (pending) throw new Error('one batch at a time');
      return new Promise((done, fail) => {
        pending = { done, fail };
        worker.postMessage(batch);
      });
    },
    async close() {
      await worker.terminate();
    },
  };
}

/** A request signed as Slack signs it (signed now, so a batch prepared just before sending is fresh). */
export function signedRequest(
  url: string,
  secret: string,
  body: string,
  contentType: string = FORM_CONTENT_TYPE,
): PreparedRequest {
  const timestamp = Math.floor(Date.now() / 1000);
  return {
    url,
    body,
    headers: {
      'content-type': contentType,
      'x-slack-request-timestamp': String(timestamp),
      'x-slack-signature': slackSignature(secret, timestamp, body),
    },
  };
}
