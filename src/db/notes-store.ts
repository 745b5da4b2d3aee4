import { and, asc, eq } from 'drizzle-orm';
import type { Clock } from '../agent/ports.js';
import type { NotesStore } from '../tools/ports.js';
import type { Db } from './database.js';
import { notes } from './schema.js';

export function createNotesStore(db: Db, clock: Clock): NotesStore {
  return {
    list: (teamId) =>
      db
        .select({ id: notes.id, text: notes.text })
        .from(notes)
        .where(eq(notes.teamId, teamId))
        .orderBy(asc(notes.id))
        .all(),
    create: (teamId, text, createdBy) =>
      db
        .insert(notes)
        .values({ teamId, text, createdBy, createdAt: clock.now() })
        .returning({ id: notes.id, text: notes.text })
        .get(),
    delete: (teamId, id) =>
      db
        .delete(notes)
        .where(and(eq(notes.teamId, teamId), eq(notes.id, id)))
        .run().changes === 1,
  };
}
