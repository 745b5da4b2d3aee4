import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { HTTPModuleFunctions } from '@slack/bolt';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';

/** How far a request's timestamp may be from now, either way (Slack's own window). */
const MAX_SKEW_MS = 5 * 60_000;

export interface RequestGuardOptions {
  /** The path Bolt serves events, interactivity and commands on. */
  endpoint: string;
  signingSecret: string;
  /** Larger bodies get 413 before anything parses them. */
  bodyLimit: number;
  logger: Logger;
  /**
   * Requests answered ahead of Bolt: given a parsed body, what to do once the request is acknowledged (an empty
   * 200), or undefined to leave the request to Bolt. Its answer is used only when the request is correctly
   * signed and inside the 5-minute window; otherwise Bolt refuses the request as it refuses any other.
   */
  takeEarly?: (body: object) => (() => void) | undefined;
}

/**
 * Wraps Bolt's HTTP request listener so that no request body can take the process down. Bolt 5.1 reads
 * `body.ssl_check` on whatever the body parses to, so a correctly signed JSON `null` (or `payload=null`) throws
 * inside a detached promise: an unhandled rejection and a request that never gets an answer. The guard buffers
 * the body once (Bolt reuses the buffer), answers 413 above the limit, and answers a body that does not parse
 * to an object itself: 401 unless correctly signed, else 400. A request that `takeEarly` takes (an Approve
 * click, whose answer is an empty 200 whatever follows) is answered here once its signature is checked, without
 * Bolt's parsing and middleware: under a burst of clicks that is most of each ack's cost. Everything else goes to
 * Bolt unchanged, which checks the signature and the 5-minute window on every request.
 */
export function guardSlackRequests(listener: RequestListener, options: RequestGuardOptions): RequestListener {
  return (req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (req.method?.toUpperCase() !== 'POST' || path !== options.endpoint) {
      // Other routes (health, unknown paths) stay synchronous, so Bolt's dispatch error handling still applies.
      listener(req, res);
      return;
    }
    screen(req, res, options).then(
      (pass) => {
        if (pass) listener(req, res);
      },
      (error: unknown) => {
        options.logger.warn('request rejected before parsing', { error: describeError(error) });
        answer(res, 400);
      },
    );
  };
}

/** True when Bolt may handle the request; otherwise the response has been sent. */
async function screen(
  req: IncomingMessage,
  res: ServerResponse,
  options: RequestGuardOptions,
): Promise<boolean> {
  // Bolt refuses timestamps more than 5 minutes old but accepts any in the future: refuse those too, so a
  // signed request cannot be kept and replayed later.
  const timestamp = Number(req.headers['x-slack-request-timestamp']);
  if (Number.isFinite(timestamp) && timestamp * 1000 > Date.now() + MAX_SKEW_MS) {
    options.logger.warn('request refused: timestamp in the future', { timestamp });
    req.resume();
    answer(res, 401);
    return false;
  }
  let buffered: Awaited<ReturnType<typeof HTTPModuleFunctions.bufferIncomingMessage>>;
  try {
    buffered = await HTTPModuleFunctions.bufferIncomingMessage(req, options.bodyLimit);
  } catch (error) {
    if (HTTPModuleFunctions.isRawBodyError(error) && error.statusCode === 413) {
      options.logger.warn('request body over the limit', { limit: options.bodyLimit });
      answer(res, 413);
      return false;
    }
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = HTTPModuleFunctions.parseHTTPRequestBody(buffered);
  } catch {
    // Bolt answers unparseable bodies itself (401 unsigned, 400 signed).
    return true;
  }
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const early = options.takeEarly?.(parsed);
    if (!early || !isSigned(req, buffered.rawBody, options.signingSecret)) return true;
    answer(res, 200);
    early();
    return false;
  }
  const signed = isSigned(req, buffered.rawBody, options.signingSecret);
  options.logger.warn('request body is not an object', { signed });
  answer(res, signed ? 400 : 401);
  return false;
}

/**
 * Slack's request signature: `v0=` and the hex HMAC-SHA256, keyed with the signing secret, of
 * `v0:{X-Slack-Request-Timestamp}:{raw body}`, with a timestamp within 5 minutes of now either way. Compared in
 * constant time on the digests' bytes (one HMAC per request).
 */
function isSigned(req: IncomingMessage, rawBody: Buffer, signingSecret: string): boolean {
  const signature = req.headers['x-slack-signature'];
  const timestamp = req.headers['x-slack-request-timestamp'];
  if (typeof signature !== 'string' || !signature.startsWith('v0=')) return false;
  if (typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp)) return false;
  if (Math.abs(Number(timestamp) * 1000 - Date.now()) > MAX_SKEW_MS) return false;
  const given = Buffer.from(signature.slice(3), 'hex');
  const expected = createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest();
  return given.length === expected.length && timingSafeEqual(given, expected);
}

function answer(res: ServerResponse, status: number): void {
  if (res.headersSent) return;
  res.writeHead(status);
  res.end();
}
