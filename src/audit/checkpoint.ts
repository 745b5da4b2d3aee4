import { createHash, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';

/** A signed statement that event `seq` of the chain had hash `hash`, made at `at`. */
export interface Checkpoint {
  seq: number;
  hash: string;
  at: number;
  /** keyId() of the key that signed it. */
  keyId: string;
  /** Base64 Ed25519 signature over statement(). */
  signature: string;
}

/** What is signed: plain text, so anyone can check a checkpoint with openssl or a few lines of code. */
function checkpointStatement(checkpoint: Pick<Checkpoint, 'seq' | 'hash' | 'at'>): string {
  return `audit-checkpoint v1\nseq ${checkpoint.seq}\nhash ${checkpoint.hash}\nat ${checkpoint.at}\n`;
}

/** The first 16 hex digits of the SHA-256 of the public key (SPKI, DER): names the key without revealing it. */
export function keyId(key: KeyObject): string {
  const publicKey = key.type === 'private' ? createPublicKey(key) : key;
  return createHash('sha256')
    .update(publicKey.export({ type: 'spki', format: 'der' }))
    .digest('hex')
    .slice(0, 16);
}

export function signCheckpoint(
  privateKey: KeyObject,
  head: Pick<Checkpoint, 'seq' | 'hash' | 'at'>,
): Checkpoint {
  const signature = sign(null, Buffer.from(checkpointStatement(head)), privateKey).toString('base64');
  return { seq: head.seq, hash: head.hash, at: head.at, keyId: keyId(privateKey), signature };
}

export function checkpointSignatureValid(publicKey: KeyObject, checkpoint: Checkpoint): boolean {
  try {
    return verify(
      null,
      Buffer.from(checkpointStatement(checkpoint)),
      publicKey,
      Buffer.from(checkpoint.signature, 'base64'),
    );
  } catch {
    return false;
  }
}

/** The text posted to AUDIT_CHECKPOINT_CHANNEL: everything needed to check it later, without the bot. */
export function checkpointMessage(checkpoint: Checkpoint): string {
  return [
    `Audit checkpoint: event ${checkpoint.seq} has hash \`${checkpoint.hash}\` (${new Date(checkpoint.at).toISOString()}).`,
    `Key \`${checkpoint.keyId}\`, Ed25519 signature \`${checkpoint.signature}\``,
  ].join('\n');
}

export type CheckpointProblem =
  | { kind: 'bad_signature'; checkpoint: Checkpoint }
  | { kind: 'other_key'; checkpoint: Checkpoint }
  | { kind: 'truncated'; checkpoint: Checkpoint; lastSeq: number }
  | { kind: 'rechained'; checkpoint: Checkpoint; lastMatching: Checkpoint | undefined };

export interface CheckpointReport {
  checked: number;
  /** The newest checkpoint that holds, if any. */
  latest: Checkpoint | undefined;
  /** Events written after the newest checkpoint: no checkpoint covers them yet. */
  uncovered: number;
  problems: CheckpointProblem[];
}

/**
 * Holds each checkpoint against the events: its signature, and the hash of event `seq` now. A checkpoint past
 * the last event shows a log cut off; a different hash, a chain rewritten (re-chained) after an edit. Pure.
 */
export function checkCheckpoints(
  events: ReadonlyMap<number, string>,
  lastSeq: number,
  checkpoints: readonly Checkpoint[],
  publicKey: KeyObject,
): CheckpointReport {
  const id = keyId(publicKey);
  const problems: CheckpointProblem[] = [];
  let latest: Checkpoint | undefined;
  let lastMatching: Checkpoint | undefined;
  for (const checkpoint of [...checkpoints].sort((a, b) => a.seq - b.seq)) {
    if (checkpoint.keyId !== id) {
      problems.push({ kind: 'other_key', checkpoint });
      continue;
    }
    if (!checkpointSignatureValid(publicKey, checkpoint)) {
      problems.push({ kind: 'bad_signature', checkpoint });
      continue;
    }
    const hash = events.get(checkpoint.seq);
    if (hash === undefined) {
      problems.push({ kind: 'truncated', checkpoint, lastSeq });
      continue;
    }
    if (hash !== checkpoint.hash) {
      problems.push({ kind: 'rechained', checkpoint, lastMatching });
      continue;
    }
    lastMatching = checkpoint;
    latest = checkpoint;
  }
  return {
    checked: checkpoints.length,
    latest,
    uncovered: Math.max(0, lastSeq - (latest?.seq ?? 0)),
    problems,
  };
}

/** One sentence per problem, naming the checkpoint it contradicts. */
export function describeCheckpointProblem(problem: CheckpointProblem): string {
  const cp = problem.checkpoint;
  const signed = `checkpoint of event ${cp.seq} (signed ${new Date(cp.at).toISOString()})`;
  switch (problem.kind) {
    case 'bad_signature':
      return `The ${signed} has an invalid signature: it was forged or edited.`;
    case 'other_key':
      return `The ${signed} was signed by key ${cp.keyId}, not by the key given: check with that key, or it was forged.`;
    case 'truncated':
      return `The log was cut off: it ends at event ${problem.lastSeq}, but the ${signed} certifies event ${cp.seq}.`;
    case 'rechained':
      return `The log was re-chained: event ${cp.seq} no longer has the hash the ${signed} certifies (${cp.hash.slice(0, 12)}…); an event ${
        problem.lastMatching
          ? `after event ${problem.lastMatching.seq} (the last checkpoint that still holds)`
          : `up to event ${cp.seq}`
      } was edited and the hashes after it recomputed.`;
  }
}
