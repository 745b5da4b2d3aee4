import { desc } from 'drizzle-orm';
import type { AuditInput } from '../audit/audit-event.js';
import { GENESIS_HASH, hashEvent } from '../audit/hash-chain.js';
import type { Db } from './database.js';
import { auditEvents } from './schema.js';

/** A drizzle transaction or the database itself: both run the same synchronous queries. */
export type Tx = Pick<Db, 'select' | 'insert' | 'update' | 'delete'>;

/**
 * Appends events to the hash chain. Call it inside the transaction of the state change the events record,
 * so the change and its audit trail commit together.
 */
export function appendAudit(tx: Tx, events: readonly AuditInput[]): void {
  if (events.length === 0) return;
  const last = tx
    .select({ seq: auditEvents.seq, hash: auditEvents.hash })
    .from(auditEvents)
    .orderBy(desc(auditEvents.seq))
    .limit(1)
    .get();
  let seq = last?.seq ?? 0;
  let prevHash = last?.hash ?? GENESIS_HASH;
  for (const event of events) {
    seq += 1;
    const hash = hashEvent(prevHash, seq, event);
    tx.insert(auditEvents)
      .values({ seq, ...event, payload: JSON.stringify(event.payload), prevHash, hash })
      .run();
    prevHash = hash;
  }
}
