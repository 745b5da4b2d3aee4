import type { AuditInput } from '../audit/audit-event.js';
import type { Program, Step } from './sql/program.js';
import type { SqlDatabase } from './sql/sql-database.js';

/** Passes a program's steps through unchanged, keeping a copy of the audit events it records. */
function* copyingAudit<T>(program: Program<T>, into: AuditInput[]): Program<T> {
  let next = program.next();
  while (!next.done) {
    const step: Step = next.value;
    if (step.op === 'audit') into.push(...step.events);
    let answer: unknown;
    try {
      answer = yield step;
    } catch (error) {
      next = program.throw(error);
      continue;
    }
    next = program.next(answer);
  }
  return next.value;
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
