import { createdAt, serialId, text } from './columns.js';
import { index, table } from './table.js';

/** Data of the built-in note tools. */
export const notes = table(
  'notes',
  {
    id: serialId(),
    teamId: text('team_id').notNull(),
    text: text('text').notNull(),
    createdBy: text('created_by').notNull(),
    createdAt: createdAt(),
  },
  (t) => [index('notes_team').on(t.teamId)],
);
