import { createHmac, timingSafeEqual } from 'node:crypto';
import { type LocalServer, listenLocal, readBody, sendText } from './local-server.js';

/** One event as the SIEM received it: a line of `npm run audit -- list --format jsonl`. */
export interface SiemEvent {
  seq: number;
  hash: string;
  prev_hash: string;
  kind: string;
  payload: unknown;
}

export interface SiemRequest {
  status: number;
  /** The body's size in bytes. */
  bytes: number;
  signatureOk: boolean;
  events: SiemEvent[];
}

/**
 * A SIEM's HTTP collector on 127.0.0.1: checks each request's signature as docs/audit.md tells a receiver
 * to, records every request, and answers `status()` (200 unless the test makes it fail) or never (`hang`).
 */
export interface FakeSiem {
  url: string;
  requests: SiemRequest[];
  /** What the next requests are answered: a status code, or `hang` (no answer, a timeout for the bot). */
  answer(next: number | 'hang'): void;
  /** The largest body it takes from now on, as a collector's limit: larger ones are answered 413. */
  limitBody(bytes: number): void;
  /** Events accepted (2xx), in arrival order, duplicates included. */
  accepted(): SiemEvent[];
  close(): Promise<void>;
}

export async function startFakeSiem(secret: string): Promise<FakeSiem> {
  const requests: SiemRequest[] = [];
  let next: number | 'hang' = 200;
  let maxBody = Number.POSITIVE_INFINITY;
  const server: LocalServer = await listenLocal(async (req, res) => {
    const body = await readBody(req);
    const timestamp = String(req.headers['x-audit-timestamp'] ?? '');
    const given = String(req.headers['x-audit-signature'] ?? '');
    const expected = `sha256=${createHmac('sha256', secret).update(`v1:${timestamp}:${body}`).digest('hex')}`;
    const signatureOk =
      given.length === expected.length &&
      timingSafeEqual(Buffer.from(given), Buffer.from(expected)) &&
      Math.abs(Date.now() / 1000 - Number(timestamp)) < 300;
    const parsed = JSON.parse(body) as { events: SiemEvent[] };
    const bytes = Buffer.byteLength(body);
    const status = next === 'hang' ? 0 : !signatureOk ? 401 : bytes > maxBody ? 413 : next;
    requests.push({ status, bytes, signatureOk, events: parsed.events });
    if (status === 0) return; // no answer: the bot's timeout ends it
    sendText(res, status, status < 300 ? 'ok' : 'failed');
  });
  return {
    url: `http://127.0.0.1:${server.port}/audit`,
    requests,
    answer(value) {
      next = value;
    },
    limitBody(bytes) {
      maxBody = bytes;
    },
    accepted: () =>
      requests.filter((r) => r.status >= 200 && r.status < 300 && r.signatureOk).flatMap((r) => r.events),
    close: () => server.close(),
  };
}
