import type { KeyObject } from 'node:crypto';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AuditPushStore } from './audit-push.js';
import { type Checkpoint, checkpointMessage, signCheckpoint } from './checkpoint.js';

/** The cursor-table row whose lease lets one process at a time sign checkpoints. */
export const CHECKPOINT_SINK = 'checkpoint';

/** A checkpoint every this many events. */
const CHECKPOINT_EVERY = 100;
/** And one at the head once an event has waited this long without a checkpoint. */
const CHECKPOINT_MAX_WAIT_MS = 3_600_000;

export interface ChainPoint {
  seq: number;
  hash: string;
  at: number;
}

/** Where the audit chain stands, for the checkpointer to decide what is due to be signed. */
export interface ChainPoints {
  head(): Promise<ChainPoint | undefined>;
  /** The newest event's and the newest checkpoint's sequence numbers (0 when none): one cheap read. */
  progress(): Promise<{ head: number; checkpointed: number }>;
  event(seq: number): Promise<ChainPoint | undefined>;
  /** When the first event after `seq` was written, if there is one. */
  firstAfter(seq: number): Promise<number | undefined>;
}

/** The signed checkpoints the checkpointer stores and posts. */
export interface CheckpointLog {
  latest(): Promise<Checkpoint | undefined>;
  /** Stores a checkpoint; false when one for that event exists already. */
  add(checkpoint: Checkpoint): Promise<boolean>;
  unposted(limit: number): Promise<Checkpoint[]>;
  posted(seq: number, where: { channel: string; ts: string }, at: number): Promise<void>;
}

/** Every signed checkpoint, as `verify --public-key` reads them. */
export interface CheckpointArchive {
  all(): Promise<Checkpoint[]>;
}

/** The chain and its checkpoints, as the database serves them in one store. */
export type CheckpointStore = ChainPoints & CheckpointLog & CheckpointArchive;

export interface CheckpointerDeps {
  store: ChainPoints & CheckpointLog;
  /** The lease, so one process at a time signs. */
  leases: Pick<AuditPushStore, 'claim' | 'release'>;
  privateKey: KeyObject;
  clock: { now(): number };
  logger: Logger;
  /** Posts the text to AUDIT_CHECKPOINT_CHANNEL; absent when no channel is set. */
  post?: (text: string) => Promise<{ channel: string; ts: string }>;
}

/**
 * Signs the chain's head with AUDIT_SIGNING_KEY: at every hundredth event, at the head once an event has
 * waited an hour without a checkpoint, and at the head when the bot stops (`tick({ head: true })`). Each
 * checkpoint is stored, and posted when a channel is set (a copy out of reach of whoever can write the database).
 */
export class Checkpointer {
  readonly #deps: CheckpointerDeps;
  #held = false;

  constructor(deps: CheckpointerDeps) {
    this.#deps = deps;
  }

  /**
   * Whether a hundredth event has been written that no checkpoint covers yet, whichever process wrote it: a
   * read cheap enough to ask every second, so that checkpoint is signed within seconds of its event.
   */
  async due(): Promise<boolean> {
    const { head, checkpointed } = await this.#deps.store.progress();
    return Math.floor(head / CHECKPOINT_EVERY) > Math.floor(checkpointed / CHECKPOINT_EVERY);
  }

  /**
   * Signs what is due and posts what was not posted; returns the checkpoints signed. With `head`, also the
   * head when events are past the last checkpoint (at a graceful stop, so what was written before it is
   * covered), however few.
   */
  async tick(options: { head?: boolean } = {}): Promise<Checkpoint[]> {
    const { store, leases, clock, privateKey } = this.#deps;
    this.#held = (await leases.claim(CHECKPOINT_SINK)) !== undefined;
    if (!this.#held) return [];
    const signed: Checkpoint[] = [];
    const add = async (point: ChainPoint) => {
      const checkpoint = signCheckpoint(privateKey, { seq: point.seq, hash: point.hash, at: clock.now() });
      if (await store.add(checkpoint)) signed.push(checkpoint);
    };
    const head = await store.head();
    if (head) {
      let covered = (await store.latest())?.seq ?? 0;
      for (let seq = (Math.floor(covered / CHECKPOINT_EVERY) + 1) * CHECKPOINT_EVERY; seq <= head.seq; ) {
        const point = await store.event(seq);
        if (point) await add(point);
        covered = seq;
        seq += CHECKPOINT_EVERY;
      }
      if (head.seq > covered) {
        const waitingSince = await store.firstAfter(covered);
        const waitedTooLong =
          waitingSince !== undefined && clock.now() - waitingSince >= CHECKPOINT_MAX_WAIT_MS;
        if (options.head || waitedTooLong) await add(head);
      }
    }
    await this.#postUnposted();
    return signed;
  }

  async stop(): Promise<void> {
    if (this.#held) await this.#deps.leases.release(CHECKPOINT_SINK).catch(() => undefined);
    this.#held = false;
  }

  async #postUnposted(): Promise<void> {
    const { post, store, logger } = this.#deps;
    if (!post) return;
    for (const checkpoint of await store.unposted(10)) {
      try {
        await store.posted(checkpoint.seq, await post(checkpointMessage(checkpoint)), this.#deps.clock.now());
      } catch (error) {
        // Tried again at the next tick; the checkpoint itself is stored.
        logger.warn('posting an audit checkpoint failed', {
          seq: checkpoint.seq,
          error: describeError(error),
        });
        return;
      }
    }
  }
}
