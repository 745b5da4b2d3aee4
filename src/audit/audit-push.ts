import { createHmac } from 'node:crypto';
import type { AuditWebhookConfig } from '../config.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { type ExportRow, formatEvents } from './audit-export.js';

/** The destination name of the SIEM webhook in the cursor table. */
export const WEBHOOK_SINK = 'webhook';

/** This process's hold on pushing to a destination: where it has got to, and until when the hold lasts. */
export interface PushClaim {
  ackedSeq: number;
  leaseUntil: number;
}

/** How far a destination is behind the log, for /healthz. */
export interface PushState {
  headSeq: number;
  ackedSeq: number;
  /** When the oldest event not yet acknowledged was written; null when none waits. */
  oldestWaitingAt: number | null;
  /** Failed attempts since the last acknowledgement, and the last failure. */
  attempts: number;
  lastError: string | null;
}

/**
 * Where the pusher keeps its place: one row per destination, taken by one process at a time with a lease, so
 * with several processes one pushes and the others wait to take over.
 */
export interface AuditPushStore {
  /** Takes or renews this process's lease on `sink`; undefined when another process holds it. */
  claim(sink: string): Promise<PushClaim | undefined>;
  /** Events after `afterSeq`, in sequence order, at most `limit`. */
  after(afterSeq: number, limit: number): Promise<ExportRow[]>;
  /**
   * Moves the cursor from `fromSeq` to `toSeq` and renews the lease; false when this process no longer holds
   * the lease or the cursor moved meanwhile (another process pushed).
   */
  acknowledge(sink: string, fromSeq: number, toSeq: number): Promise<PushClaim | undefined>;
  /** Counts a failed attempt (kept for /healthz). */
  failed(sink: string, error: string): Promise<void>;
  /** Gives the lease up, so another process may take over at once. */
  release(sink: string): Promise<void>;
  state(sink: string): Promise<PushState>;
}

/** The lag /healthz shows: events not yet acknowledged, and how long the oldest of them has waited. */
export function pushLag(state: PushState, now: number) {
  return {
    events: Math.max(0, state.headSeq - state.ackedSeq),
    seconds:
      state.oldestWaitingAt === null ? 0 : Math.max(0, Math.round((now - state.oldestWaitingAt) / 1000)),
    ackedSeq: state.ackedSeq,
    attempts: state.attempts,
    ...(state.lastError ? { lastError: state.lastError } : {}),
  };
}

/**
 * How many of `lines` (events as JSON) one push carries: as many as fit in a body of `maxBytes`, and at least
 * one, so an event larger than that alone still goes (alone).
 */
export function eventsThatFit(lines: readonly string[], maxBytes: number): number {
  // `{"events":[` and `]}`, then each line and the comma before it.
  let bytes = 13;
  let fit = 0;
  for (const line of lines) {
    bytes += Buffer.byteLength(line) + (fit > 0 ? 1 : 0);
    if (bytes > maxBytes && fit > 0) break;
    fit += 1;
  }
  return fit;
}

/**
 * The body and headers of one push: `{"events":[…]}` with each event exactly as a line of `npm run audit --
 * list --format jsonl` (`lines`, from `formatEvents`), signed with HMAC-SHA256 over `v1:<timestamp>:<body>`.
 */
export function signedBatch(
  lines: readonly string[],
  secret: string,
  nowMs: number,
): { body: string; headers: Record<string, string> } {
  const body = `{"events":[${lines.join(',')}]}`;
  const timestamp = String(Math.floor(nowMs / 1000));
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-audit-timestamp': timestamp,
      'x-audit-signature': `sha256=${signature(secret, timestamp, body)}`,
    },
  };
}

export function signature(secret: string, timestamp: string, body: string): string {
  return createHmac('sha256', secret).update(`v1:${timestamp}:${body}`).digest('hex');
}

export interface AuditPusherDeps {
  store: AuditPushStore;
  webhook: AuditWebhookConfig;
  clock: { now(): number };
  logger: Logger;
  /** How often to look for new events when everything was acknowledged; default 1 s. */
  pollMs?: number;
  /** The first retry's delay; each failure doubles it up to `retryMaxMs`. Defaults 500 ms and 30 s. */
  retryBaseMs?: number;
  retryMaxMs?: number;
  fetch?: typeof fetch;
}

type Attempt = { ok: true } | { ok: false; reason: string; tooLarge?: boolean };

/**
 * Pushes the audit log to a SIEM, in order, at least once: a batch is acknowledged in the database only after
 * a 2xx answer, so after a failure, a timeout or a restart the same events go again (a receiver deduplicates by
 * `seq`). Runs on its own timers, never inside a request or a run; with several processes, the one holding the
 * cursor's lease pushes.
 */
export class AuditPusher {
  readonly #deps: AuditPusherDeps;
  #stopped = false;
  #wake: (() => void) | undefined;
  #inFlight: AbortController | undefined;
  #loop: Promise<void> | undefined;
  #claim: { ackedSeq: number; renewAt: number } | undefined;
  /** Events per push after the receiver refused a body as too large (413), until it accepts one. */
  #cap: number | undefined;

  constructor(deps: AuditPusherDeps) {
    this.#deps = deps;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#inFlight?.abort();
    this.#wake?.();
    await this.#loop;
    if (this.#claim) {
      await this.#deps.store.release(WEBHOOK_SINK).catch(() => undefined);
      this.#claim = undefined;
    }
  }

  async #run(): Promise<void> {
    const { logger } = this.#deps;
    const pollMs = this.#deps.pollMs ?? 1000;
    let failures = 0;
    while (!this.#stopped) {
      try {
        const acked = await this.#held();
        if (acked === undefined) {
          await this.#sleep(pollMs);
          continue;
        }
        const rows = await this.#deps.store.after(acked, this.#cap ?? this.#deps.webhook.batchSize);
        if (rows.length === 0) {
          await this.#sleep(pollMs);
          continue;
        }
        const all = formatEvents(rows, 'jsonl');
        const count = eventsThatFit(all, this.#deps.webhook.maxBytes);
        const last = rows[count - 1];
        const attempt = await this.#post(all.slice(0, count));
        if (this.#stopped || !last) return;
        if (attempt.ok) {
          if (failures > 0) logger.info('audit webhook accepts events again', { afterFailures: failures });
          failures = 0;
          this.#cap = undefined;
          await this.#acknowledged(acked, last.seq);
          continue;
        }
        failures += 1;
        if (attempt.tooLarge) this.#tooLarge(count, rows[0]?.seq);
        logger.warn('audit webhook push failed; retrying', {
          reason: attempt.reason,
          firstSeq: rows[0]?.seq,
          attempt: failures,
        });
        await this.#deps.store.failed(WEBHOOK_SINK, attempt.reason).catch(() => undefined);
        await this.#sleep(this.#backoff(failures));
      } catch (error) {
        // The database failed (it may be restarting): try again later, never end the process.
        logger.warn('audit webhook push paused', { error: describeError(error) });
        this.#claim = undefined;
        await this.#sleep(this.#backoff(Math.max(failures, 1)));
      }
    }
  }

  /** The last acknowledged sequence when this process holds the cursor (renewing the lease in time). */
  async #held(): Promise<number | undefined> {
    const now = this.#deps.clock.now();
    if (this.#claim && now < this.#claim.renewAt) return this.#claim.ackedSeq;
    const claim = await this.#deps.store.claim(WEBHOOK_SINK);
    this.#claim = claim && this.#remember(claim, now);
    return this.#claim?.ackedSeq;
  }

  async #acknowledged(fromSeq: number, toSeq: number): Promise<void> {
    const claim = await this.#deps.store.acknowledge(WEBHOOK_SINK, fromSeq, toSeq);
    if (!claim) {
      this.#deps.logger.warn('audit webhook cursor taken over by another process', { fromSeq, toSeq });
      this.#claim = undefined;
      return;
    }
    this.#claim = this.#remember(claim, this.#deps.clock.now());
  }

  /**
   * The receiver refused `count` events as too large (HTTP 413): the next tries send half as many, down to one;
   * one event it refuses alone is named in the log, with the fix, and tried again (nothing after it is sent).
   */
  #tooLarge(count: number, firstSeq: number | undefined): void {
    if (count > 1) {
      this.#cap = Math.ceil(count / 2);
      return;
    }
    this.#deps.logger.error('the audit webhook refuses one event as too large', {
      seq: firstSeq,
      fix: 'raise the largest request body the receiver accepts; the push waits for it, in order',
    });
  }

  /** Renews at a third of what is left of the lease, as runs do. */
  #remember(claim: PushClaim, now: number) {
    return { ackedSeq: claim.ackedSeq, renewAt: now + Math.max(0, claim.leaseUntil - now) / 3 };
  }

  #backoff(failures: number): number {
    const base = this.#deps.retryBaseMs ?? 500;
    const max = this.#deps.retryMaxMs ?? 30_000;
    return Math.min(max, base * 2 ** Math.min(failures - 1, 20));
  }

  async #post(lines: readonly string[]): Promise<Attempt> {
    const { webhook, clock } = this.#deps;
    const { body, headers } = signedBatch(lines, webhook.secret, clock.now());
    const controller = new AbortController();
    this.#inFlight = controller;
    const timer = setTimeout(() => controller.abort(new Error('timeout')), webhook.timeoutMs);
    try {
      const response = await (this.#deps.fetch ?? fetch)(webhook.url, {
        method: 'POST',
        headers,
        body,
        // A redirect could carry the audit log elsewhere: it counts as a failure.
        redirect: 'error',
        signal: controller.signal,
      });
      await response.body?.cancel().catch(() => undefined);
      return response.status >= 200 && response.status < 300
        ? { ok: true }
        : { ok: false, reason: `HTTP ${response.status}`, tooLarge: response.status === 413 };
    } catch (error) {
      return {
        ok: false,
        reason: controller.signal.aborted
          ? `no answer within ${webhook.timeoutMs} ms`
          : describeError(error).slice(0, 300),
      };
    } finally {
      clearTimeout(timer);
      this.#inFlight = undefined;
    }
  }

  #sleep(ms: number): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      timer.unref();
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }
}
