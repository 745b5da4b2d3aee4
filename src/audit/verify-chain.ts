import type { StoredAuditEvent } from './audit-event.js';
import {
  CHAIN_VERSION,
  type ChainedContent,
  GENESIS_HASH,
  hashEvent,
  hashEventV2,
  payloadDigest,
} from './hash-chain.js';

export type ChainProblem = 'edited' | 'deleted' | 'reordered';

export type ChainVerdict =
  | { ok: true; count: number; headHash: string }
  | { ok: false; count: number; seq: number; problem: ChainProblem; message: string };

/** How far from its stored position a moved event is looked for. */
const SEARCH_WINDOW = 1000;

/**
 * Checks the hash chain of events read in sequence order and names the first event that was edited, deleted or
 * reordered. Pure: the caller reads the rows. A chain cannot prove that events were not cut off at its end;
 * compare the head hash with one recorded elsewhere for that.
 *
 * @example
 * const verdict = verifyChain(rows);
 * if (!verdict.ok) console.error(verdict.message); // "event 7 was edited: ..."
 */
export function verifyChain(events: readonly StoredAuditEvent[]): ChainVerdict {
  const bySelfHash = new Map(events.map((event) => [event.hash, event]));
  let prevHash = GENESIS_HASH;
  let prevSeq = 0;
  for (const event of events) {
    if (continuesChain(event, prevHash, prevSeq)) {
      prevHash = event.hash;
      prevSeq = event.seq;
      continue;
    }
    const expectedSeq = prevSeq + 1;
    const sealedAt = originalSeq(event);
    if (sealedAt === event.seq && event.prevHash === prevHash && event.seq === expectedSeq) {
      return {
        ok: false,
        count: events.length,
        seq: event.seq,
        problem: 'edited',
        message: `event ${event.seq} was edited: its payload no longer matches its digest`,
      };
    }
    return {
      ok: false,
      count: events.length,
      ...diagnose(event, sealedAt, prevHash, expectedSeq, bySelfHash),
    };
  }
  return { ok: true, count: events.length, headHash: prevHash };
}

/**
 * Whether `event` carries the chain on, untouched, from the event before it (`prevHash`, `prevSeq`): what every
 * event of a chain that holds passes.
 */
export function continuesChain(event: StoredAuditEvent, prevHash: string, prevSeq: number): boolean {
  return (
    event.seq === prevSeq + 1 &&
    event.prevHash === prevHash &&
    hashAt(event, event.seq, chainedContent(event)) === event.hash &&
    payloadHolds(event)
  );
}

/** Reads the chain from the event after `afterSeq`, `limit` events at most, in sequence order. */
export type ChainReader = (range?: { afterSeq: number; limit: number }) => Promise<StoredAuditEvent[]>;

/**
 * The same verdict as `verifyChain`, read `batch` events at a time with `pause()` between batches, so that a
 * long log never holds the thread (or memory) for the whole read: while every event carries the chain on,
 * only a batch is in hand. At the first event that does not, the whole chain is read and `verifyChain` names
 * what was done to it.
 */
export async function verifyChainInBatches(
  read: ChainReader,
  pause: () => Promise<void>,
  batch = 2000,
): Promise<ChainVerdict> {
  let prevHash = GENESIS_HASH;
  let prevSeq = 0;
  let count = 0;
  for (;;) {
    const events = await read({ afterSeq: prevSeq, limit: batch });
    for (const event of events) {
      if (!continuesChain(event, prevHash, prevSeq)) return verifyChain(await read());
      prevHash = event.hash;
      prevSeq = event.seq;
      count += 1;
    }
    if (events.length < batch) return { ok: true, count, headHash: prevHash };
    await pause();
  }
}

function diagnose(
  event: StoredAuditEvent,
  sealedAt: number | undefined,
  prevHash: string,
  expectedSeq: number,
  bySelfHash: ReadonlyMap<string, StoredAuditEvent>,
): { seq: number; problem: ChainProblem; message: string } {
  const seq = event.seq;
  if (sealedAt === undefined) {
    return {
      seq,
      problem: 'edited',
      message: `event ${seq} was edited: its contents no longer match its hash`,
    };
  }
  const predecessor = bySelfHash.get(event.prevHash);
  if (predecessor || sealedAt !== seq) {
    if (predecessor && predecessor.seq > seq) {
      return {
        seq,
        problem: 'reordered',
        message: `event ${seq} was reordered: it was written as number ${sealedAt}, after the event now numbered ${predecessor.seq}`,
      };
    }
    if (sealedAt !== seq && event.prevHash !== GENESIS_HASH && !predecessor) {
      const missing = sealedAt - seq;
      return {
        seq,
        problem: 'deleted',
        message: `${missing > 1 ? `${missing} events` : 'an event'} before event ${seq} ${missing > 1 ? 'were' : 'was'} deleted and the later events renumbered (event ${seq} was written as number ${sealedAt})`,
      };
    }
    return {
      seq,
      problem: 'reordered',
      message: `event ${seq} was reordered: it was written as number ${sealedAt}`,
    };
  }
  if (seq > expectedSeq) {
    const range =
      seq - 1 > expectedSeq ? `events ${expectedSeq} to ${seq - 1} were` : `event ${expectedSeq} was`;
    const where =
      expectedSeq === 1
        ? `the chain now starts at event ${seq}`
        : `event ${seq} follows event ${expectedSeq - 1}`;
    return { seq: expectedSeq, problem: 'deleted', message: `${range} deleted (${where})` };
  }
  if (prevHash === GENESIS_HASH && seq === 1) {
    return { seq, problem: 'edited', message: `event ${seq} was edited: it does not start the chain` };
  }
  // In place and sealed, but its predecessor's hash is unknown: the event before it was rewritten, hash and all.
  return {
    seq: seq - 1,
    problem: 'edited',
    message: `event ${seq - 1} was edited: its hash was recomputed, but event ${seq} still points at the original`,
  };
}

/** Version 2: the payload (content pruned to digests or not) still has the digest the hash covers. */
function payloadHolds(event: StoredAuditEvent): boolean {
  return (event.version ?? 1) === 1 || event.payloadDigest === payloadDigest(event.payload);
}

/** The event's hash as computed for `seq`, by its chain version; undefined for a version this code does not know. */
function hashAt(event: StoredAuditEvent, seq: number, content: ChainedContent): string | undefined {
  switch (event.version ?? 1) {
    case 1:
      return hashEvent(event.prevHash, seq, content);
    case CHAIN_VERSION: {
      if (!event.payloadDigest) return undefined;
      const { payload: _, ...fields } = content;
      return hashEventV2(event.prevHash, seq, { ...fields, payloadDigest: event.payloadDigest });
    }
    default:
      return undefined;
  }
}

/** The sequence number under which the event's hash was computed, or undefined when its contents changed. */
function originalSeq(event: StoredAuditEvent): number | undefined {
  const content = chainedContent(event);
  if (hashAt(event, event.seq, content) === event.hash) return event.seq;
  for (let delta = 1; delta <= SEARCH_WINDOW; delta += 1) {
    for (const seq of [event.seq + delta, event.seq - delta]) {
      if (seq >= 1 && hashAt(event, seq, content) === event.hash) return seq;
    }
  }
  return undefined;
}

/** What an event's hash covers besides its position and predecessor. */
function chainedContent(event: StoredAuditEvent): ChainedContent {
  return {
    at: event.at,
    actor: event.actor,
    kind: event.kind,
    teamId: event.teamId,
    enterpriseId: event.enterpriseId,
    conversationId: event.conversationId,
    runId: event.runId,
    approvalId: event.approvalId,
    payload: event.payload,
  };
}
