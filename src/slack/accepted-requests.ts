import { createHash } from 'node:crypto';
import type { AcceptedRequest, RequestLedger } from '../approvals/click-inbox.js';

/**
 * The key a request is accepted once under: an event by its `event_id` (Slack's retries of one event carry the
 * same id), anything else (slash commands, interactions) by a digest of its signed timestamp and signature,
 * which a replay repeats byte for byte. Undefined for what changes nothing (`url_verification`, `ssl_check`).
 */
export function requestKey(
  body: object,
  signed: { timestamp: string; signature: string },
): string | undefined {
  const type = 'type' in body ? body.type : undefined;
  if (type === 'url_verification' || 'ssl_check' in body) return undefined;
  if (type === 'event_callback') return eventKey(body);
  const digest = createHash('sha256').update(`${signed.timestamp}:${signed.signature}`).digest('hex');
  return `sig:${digest}`;
}

/** An event's key, when its body names its id (Socket Mode and HTTP alike). */
export function eventKey(body: object): string | undefined {
  const id = 'event_id' in body ? body.event_id : undefined;
  return typeof id === 'string' && id.length > 0 ? `event:${id}` : undefined;
}

/**
 * Accepts requests in groups (a group commit): requests that arrive while the previous group is being written,
 * or within the same turn of the event loop, are written in the next single transaction, and each learns
 * whether it was new once that transaction committed. A burst of clicks thus costs one commit per group, not
 * one per click, and none is acknowledged before its row is durable. Rejects when the write fails.
 */
export function groupCommit(
  ledger: Pick<RequestLedger, 'accept'>,
): (request: AcceptedRequest) => Promise<boolean> {
  type Waiting = {
    request: AcceptedRequest;
    resolve: (fresh: boolean) => void;
    reject: (error: unknown) => void;
  };
  let waiting: Waiting[] = [];
  let writing = false;
  const write = async () => {
    writing = true;
    while (waiting.length > 0) {
      const group = waiting;
      waiting = [];
      try {
        const fresh = await ledger.accept(group.map((w) => w.request));
        group.forEach((w, index) => {
          w.resolve(fresh[index] === true);
        });
      } catch (error) {
        for (const w of group) w.reject(error);
      }
    }
    writing = false;
  };
  return (request) =>
    new Promise<boolean>((resolve, reject) => {
      waiting.push({ request, resolve, reject });
      if (waiting.length === 1 && !writing) setImmediate(() => void write());
    });
}
