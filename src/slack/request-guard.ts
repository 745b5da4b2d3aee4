import { createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { HTTPModuleFunctions } from '@slack/bolt';
import {
  type AcceptedRequest,
  type ApprovalClick,
  SIGNED_REQUEST_WINDOW_MS,
} from '../approvals/click-inbox.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { requestKey } from './accepted-requests.js';

/** How far a request's timestamp may be from now, either way (Slack's own window). */
const MAX_SKEW_MS = SIGNED_REQUEST_WINDOW_MS;

export interface RequestGuardOptions {
  /** The path Bolt serves events, interactivity and commands on. */
  endpoint: string;
  signingSecret: string;
  /** Larger bodies get 413 before anything parses them. */
  bodyLimit: number;
  logger: Logger;
  /** Where correctly signed requests are recorded once, and events not taken in after all are forgotten. */
  requests?: AcceptedRequests | undefined;
  /**
   * Requests answered ahead of Bolt: the Approve click a parsed body carries, or undefined to leave the request
   * to Bolt. Used only when the request is correctly signed and inside the 5-minute window; otherwise Bolt
   * refuses the request as it refuses any other.
   */
  takeEarly?: ((body: object) => ApprovalClick | undefined) | undefined;
  /** Where a click taken early goes once accepted and acknowledged (an empty 200), with its key. */
  handOver?: ((click: ApprovalClick, key: string) => void) | undefined;
}

/** Where the guard records requests. */
export interface AcceptedRequests {
  /**
   * Records a correctly signed request (with the click it carries, if any) before it is answered: false for a
   * key already accepted, a replay, which is answered 200 and goes no further. When it rejects (the database is
   * down) the request is answered 503: Slack then shows the person an error, or retries the event.
   */
  accept: (request: AcceptedRequest) => Promise<boolean>;
  /**
   * Forgets an event Bolt answered with an error (it refused it before any listener ran: its installation
   * could not be read, say), so that Slack's retry, which carries the same event id, is not taken for a replay.
   */
  forget: (key: string) => Promise<void>;
}

/** Bolt may handle the request (accepted under `key`, if any), or the guard has answered it. */
type Screened = { toBolt: true; key: string | undefined } | { toBolt: false };

/**
 * Wraps Bolt's HTTP request listener so that no request body can take the process down. Bolt 5.1 reads
 * `body.ssl_check` on whatever the body parses to, so a correctly signed JSON `null` (or `payload=null`) throws
 * inside a detached promise: an unhandled rejection and a request that never gets an answer. The guard buffers
 * the body once (Bolt reuses the buffer), answers 413 above the limit, and answers a body that does not parse
 * to an object itself: 401 unless correctly signed, else 400. Every correctly signed request is accepted once
 * (`accept`): a replay of one already accepted is answered 200 and changes nothing. A request that `takeEarly`
 * takes (an Approve click, whose answer is an empty 200 whatever follows) is answered here once its signature is
 * checked and the click is recorded, without Bolt's parsing and middleware: under a burst of clicks that is most
 * of each ack's cost. Everything else goes to Bolt unchanged, which checks the signature and the 5-minute window
 * on every request.
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
      (screened) => {
        if (!screened.toBolt) return;
        const { key } = screened;
        if (key?.startsWith('event:') && options.requests)
          forgetIfRefused(res, key, options.requests.forget, options.logger);
        listener(req, res);
      },
      (error: unknown) => {
        options.logger.warn('request rejected before parsing', { error: describeError(error) });
        answer(res, 400);
      },
    );
  };
}

/**
 * Slack sends an event again when its delivery was answered with an error: a key kept for it would make that
 * retry a replay, and the event would be lost. So an error answer is held until the key is forgotten (Slack's
 * first retry comes at once). Events are acknowledged before their listeners run, so an error means none ran
 * (and a message is deduplicated by its event id besides).
 */
function forgetIfRefused(
  res: ServerResponse,
  key: string,
  forget: (key: string) => Promise<void>,
  logger: Logger,
): void {
  const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
  res.end = ((...args: unknown[]) => {
    if (res.statusCode < 400) return end(...args);
    forget(key)
      .catch((error: unknown) =>
        logger.error('a refused event could not be forgotten; its retry will be ignored', {
          key,
          error: describeError(error),
        }),
      )
      .finally(() => end(...args));
    return res;
  }) as ServerResponse['end'];
}

/** Whether Bolt may handle the request, and under which key it was accepted; otherwise the response was sent. */
async function screen(
  req: IncomingMessage,
  res: ServerResponse,
  options: RequestGuardOptions,
): Promise<Screened> {
  // Bolt refuses timestamps more than 5 minutes old but accepts any in the future: refuse those too, so a
  // signed request cannot be kept and replayed later.
  const timestamp = Number(req.headers['x-slack-request-timestamp']);
  if (Number.isFinite(timestamp) && timestamp * 1000 > Date.now() + MAX_SKEW_MS) {
    options.logger.warn('request refused: timestamp in the future', { timestamp });
    req.resume();
    answer(res, 401);
    return HANDLED;
  }
  let buffered: Awaited<ReturnType<typeof HTTPModuleFunctions.bufferIncomingMessage>>;
  try {
    buffered = await HTTPModuleFunctions.bufferIncomingMessage(req, options.bodyLimit);
  } catch (error) {
    if (HTTPModuleFunctions.isRawBodyError(error) && error.statusCode === 413) {
      options.logger.warn('request body over the limit', { limit: options.bodyLimit });
      answer(res, 413);
      return HANDLED;
    }
    throw error;
  }
  let parsed: unknown;
  try {
    parsed = HTTPModuleFunctions.parseHTTPRequestBody(buffered);
  } catch {
    // Bolt answers unparseable bodies itself (401 unsigned, 400 signed).
    return TO_BOLT;
  }
  if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) {
    const signed = signedParts(req, buffered.rawBody, options.signingSecret);
    // Unsigned: Bolt refuses it (401) as it refuses any other.
    if (!signed) return TO_BOLT;
    return acceptSigned(res, parsed, signed, options);
  }
  const signed = signedParts(req, buffered.rawBody, options.signingSecret) !== undefined;
  options.logger.warn('request body is not an object', { signed });
  answer(res, signed ? 400 : 401);
  return HANDLED;
}

const HANDLED: Screened = { toBolt: false };
const TO_BOLT: Screened = { toBolt: true, key: undefined };

/** A correctly signed request: accepted once, then answered here (an Approve click) or left to Bolt. */
async function acceptSigned(
  res: ServerResponse,
  body: object,
  signed: SignedParts,
  options: RequestGuardOptions,
): Promise<Screened> {
  const click = options.takeEarly?.(body);
  const key = requestKey(body, signed);
  if (key !== undefined && options.requests) {
    let fresh: boolean;
    try {
      fresh = await options.requests.accept(click ? { key, click } : { key });
    } catch (error) {
      options.logger.error('request could not be recorded; answered 503', { error: describeError(error) });
      answer(res, 503);
      return HANDLED;
    }
    if (!fresh) {
      // Answered as any request is, so a replayer learns nothing; only the first delivery takes effect.
      options.logger.warn('replayed request ignored', { key: key.slice(0, 24) });
      answer(res, 200);
      return HANDLED;
    }
  }
  if (!click || key === undefined) return { toBolt: true, key: options.requests ? key : undefined };
  answer(res, 200);
  options.handOver?.(click, key);
  return HANDLED;
}

/** The signed headers of a correctly signed request. */
interface SignedParts {
  timestamp: string;
  signature: string;
}

/**
 * Slack's request signature: `v0=` and the hex HMAC-SHA256, keyed with the signing secret, of
 * `v0:{X-Slack-Request-Timestamp}:{raw body}`, with a timestamp within 5 minutes of now either way. Compared in
 * constant time on the digests' bytes (one HMAC per request). Undefined unless correctly signed.
 */
function signedParts(req: IncomingMessage, rawBody: Buffer, signingSecret: string): SignedParts | undefined {
  const signature = req.headers['x-slack-signature'];
  const timestamp = req.headers['x-slack-request-timestamp'];
  if (typeof signature !== 'string' || !signature.startsWith('v0=')) return undefined;
  if (typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp)) return undefined;
  if (Math.abs(Number(timestamp) * 1000 - Date.now()) > MAX_SKEW_MS) return undefined;
  const given = Buffer.from(signature.slice(3), 'hex');
  const expected = createHmac('sha256', signingSecret).update(`v0:${timestamp}:`).update(rawBody).digest();
  // The digest's bytes, lower-cased: the same signature however its hex is written.
  const matches = given.length === expected.length && timingSafeEqual(given, expected);
  return matches ? { timestamp, signature: expected.toString('hex') } : undefined;
}

function answer(res: ServerResponse, status: number): void {
  if (res.headersSent) return;
  res.writeHead(status);
  res.end();
}
