import { createHash } from 'node:crypto';
import type { AuditInput } from './audit-event.js';

/** What the hash covers besides the sequence number: the event as written (its kind read back as any string). */
export type ChainedContent = Omit<AuditInput, 'kind' | 'enterpriseId'> & {
  kind: string;
  /** Hashed only when present (see `hashedFields`). */
  enterpriseId?: string | null | undefined;
};

/** The hash that precedes the first event. */
export const GENESIS_HASH = '0'.repeat(64);

/** JSON with object keys sorted at every depth, so equal events always encode to equal bytes. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value)
      .filter(([, inner]) => inner !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([key, inner]) => `${JSON.stringify(key)}:${canonicalJson(inner)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * The fields a hash covers: the Enterprise Grid organisation only when the event has one, so every event written
 * before events carried it (none had one) hashes exactly as it did, and one that has it cannot lose or gain it
 * unseen.
 */
function hashedFields<T extends { enterpriseId?: string | null | undefined }>(
  event: T,
): Omit<T, 'enterpriseId'> {
  const { enterpriseId, ...fields } = event;
  return enterpriseId ? { ...fields, enterpriseId } : fields;
}

/** SHA-256 over the previous hash and the canonical encoding of the event including its sequence number. */
export function hashEvent(prevHash: string, seq: number, event: ChainedContent): string {
  return createHash('sha256')
    .update(prevHash)
    .update('\n')
    .update(canonicalJson({ seq, ...hashedFields(event) }))
    .digest('hex');
}

/** The chain version of events written now; version 1 events (before retention) stay as they are. */
export const CHAIN_VERSION = 2;

/** The top-level payload key where retention notes when and under which limit content was removed. */
export const PRUNED_KEY = '$pruned';
/** What replaces a pruned value: its digest, so the payload's digest can still be computed. */
export const DIGEST_KEY = '$digest';

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** The digest a pruned value (`{"$digest": …}`) carries in its place; undefined for any other value. */
export function prunedDigest(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  const [only] = entries;
  return entries.length === 1 &&
    only?.[0] === DIGEST_KEY &&
    typeof only[1] === 'string' &&
    /^[0-9a-f]{64}$/.test(only[1])
    ? only[1]
    : undefined;
}

/** The digest of one payload value, or the digest a pruned value carries in its place. */
export function valueDigest(value: unknown): string {
  return prunedDigest(value) ?? sha256(canonicalJson(value));
}

/**
 * Version 2: the digest of a payload, over the digest of each top-level value (the retention note left out), so
 * any value may be replaced by `{"$digest": …}` and the payload still has the same digest.
 */
export function payloadDigest(payload: Record<string, unknown>): string {
  const digests = Object.entries(payload)
    .filter(([key, value]) => key !== PRUNED_KEY && value !== undefined)
    .map(([key, value]) => [key, valueDigest(value)]);
  return sha256(canonicalJson(Object.fromEntries(digests)));
}

/**
 * Version 2: SHA-256 over the previous hash and the canonical event with its payload's digest in its place (and
 * its organisation when it has one).
 */
export function hashEventV2(
  prevHash: string,
  seq: number,
  event: Omit<ChainedContent, 'payload'> & { payloadDigest: string },
): string {
  return createHash('sha256')
    .update(prevHash)
    .update('\n')
    .update(canonicalJson({ seq, version: CHAIN_VERSION, ...hashedFields(event) }))
    .digest('hex');
}
