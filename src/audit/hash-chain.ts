import { createHash } from 'node:crypto';
import type { AuditInput } from './audit-event.js';

/** What the hash covers besides the sequence number: the event as written (its kind read back as any string). */
export type ChainedContent = Omit<AuditInput, 'kind'> & { kind: string };

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

/** SHA-256 over the previous hash and the canonical encoding of the event including its sequence number. */
export function hashEvent(prevHash: string, seq: number, event: ChainedContent): string {
  return createHash('sha256')
    .update(prevHash)
    .update('\n')
    .update(canonicalJson({ seq, ...event }))
    .digest('hex');
}
