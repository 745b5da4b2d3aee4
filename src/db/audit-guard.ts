import type Database from 'better-sqlite3';

/**
 * Makes `audit_events` append-only inside SQLite itself: any UPDATE or DELETE aborts, whoever issues it. Someone
 * with the file can still drop the triggers; the hash chain is what proves such an edit (`npm run audit --
 * verify`). Idempotent; runs after the migrations at every start.
 */
export function guardAuditEvents(sqlite: Database.Database): void {
  for (const action of ['UPDATE', 'DELETE'] as const) {
    sqlite.exec(
      `CREATE TRIGGER IF NOT EXISTS audit_events_no_${action.toLowerCase()} BEFORE ${action} ON audit_events
       BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;`,
    );
  }
}
