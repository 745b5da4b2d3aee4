import type { Clock } from '../clock.js';
import type { IdGenerator } from '../ids.js';
import type { SqlDatabase } from './sql/sql-database.js';

/** What every store is built from: the database, the time, and who this process is when it takes a lease. */
export interface StoreContext {
  db: SqlDatabase;
  clock: Clock;
  newId: IdGenerator;
  /** This process, as written in the leases it takes (runs it drives, deliveries it posts). */
  owner: string;
  /** How long a lease lasts unless renewed. */
  leaseMs: number;
  /**
   * True for an owner known to be gone (a stopped process on this host): its leases are taken over at once
   * instead of when they expire.
   */
  ownerIsGone(owner: string): boolean;
}
