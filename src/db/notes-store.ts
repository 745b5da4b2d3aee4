import { sql } from 'drizzle-orm';
import { AppError } from '../errors.js';
import type { Note, NotesStore } from '../tools/ports.js';
import { readNumber, readString } from './sql/columns.js';
import { count, type Row, rows } from './sql/program.js';
import type { StoreContext } from './store-context.js';

const toNote = (r: Row): Note => ({ id: readNumber(r, 'id'), text: readString(r, 'text') });

export function createNotesStore({ db, clock }: StoreContext): NotesStore {
  return {
    list: (teamId) =>
      db.read(function* () {
        return (yield* rows(sql`select id, text from notes where team_id = ${teamId} order by id`)).map(
          toNote,
        );
      }),
    create(teamId, text, createdBy) {
      const at = clock.now();
      return db.write(function* () {
        const [created] = yield* rows(sql`insert into notes (team_id, text, created_by, created_at)
          values (${teamId}, ${text}, ${createdBy}, ${at}) returning id, text`);
        if (!created) throw new AppError('database.not_stored', 'The note was not stored');
        return toNote(created);
      });
    },
    delete(teamId, id) {
      return db.write(function* () {
        return (yield* count(sql`delete from notes where team_id = ${teamId} and id = ${id}`)) === 1;
      });
    },
  };
}
