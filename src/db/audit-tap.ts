import type { AuditInput } from '../audit/audit-event.js';
import { forwardSteps, type Program } from './sql/program.js';
import type { SqlDatabase } from './sql/sql-database.js';

/** Passes a program's steps through unchanged, keeping a copy of the audit events it records. */
function copyingAudit<T>(program: Program<T>, into: AuditInput[]): Program<T> {
  return forwardSteps(program, (step) => {
    if (step.op === 'audit') into.push(...step.events);
    return true;
  });
}

/**
 * The database, telling `committed` the audit events of each write transaction once it committed (a retried
 * attempt's events are not told twice), and running `onClose` after it closes.
 */
export function tapAuditEvents(
  db: SqlDatabase,
  committed: (events: readonly AuditInput[]) => void,
  onClose: () => Promise<void>,
): SqlDatabase {
  return {
    dialect: db.dialect,
    read: (program) => db.read(program),
    async write(program) {
      let events: AuditInput[] = [];
      const result = await db.write(() => {
        events = [];
        return copyingAudit(program(), events);
      });
      if (events.length > 0) committed(events);
      return result;
    },
    isOpen: () => db.isOpen(),
    probe: () => db.probe(),
    async close() {
      await db.close();
      await onClose();
    },
  };
}
