import { request } from 'node:http';
import { slackSignature } from './slack-requests.js';

/** How a held request ended: the server's status, or the connection failed (refused, reset, closed). */
export type HeldOutcome = { ok: true; status: number } | { ok: false; error: string };

export interface HeldRequest {
  /** Sends the rest of the body and resolves with how the server answered. */
  finish(): Promise<HeldOutcome>;
}

export interface HeldPostOptions {
  body: string;
  contentType: string;
  headers?: Record<string, string>;
}

/**
 * A request signed as Slack signs it, whose headers and first half of the body are on the server once this
 * resolves, the rest sent by `finish()`: a request a server is in the middle of receiving, held there while
 * something else happens to the server (a SIGTERM), on a connection of its own.
 */
export async function startHeldPost(
  url: string,
  secret: string,
  options: HeldPostOptions,
): Promise<HeldRequest> {
  const timestamp = Math.floor(Date.now() / 1000);
  const bytes = Buffer.from(options.body);
  const half = Math.floor(bytes.length / 2);
  let held: ReturnType<typeof request> | undefined;
  const outcome = new Promise<HeldOutcome>((resolve) => {
    const req = request(url, {
      method: 'POST',
      agent: false,
      headers: {
        'content-type': options.contentType,
        'content-length': String(bytes.length),
        'x-slack-request-timestamp': String(timestamp),
        'x-slack-signature': slackSignature(secret, timestamp, options.body),
        ...options.headers,
      },
    });
    held = req;
    req.once('error', (error) => resolve({ ok: false, error: error.message }));
    req.once('response', (res) => {
      res.resume();
      res.once('end', () => resolve({ ok: true, status: res.statusCode ?? 0 }));
      res.once('error', (error) => resolve({ ok: false, error: error.message }));
    });
  });
  const sent = await new Promise<boolean>((resolve) => {
    held?.once('error', () => resolve(false));
    held?.write(bytes.subarray(0, half), () => resolve(true));
  });
  return {
    finish: async () => {
      if (sent) held?.end(bytes.subarray(half));
      return outcome;
    },
  };
}
