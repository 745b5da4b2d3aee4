import { z } from 'zod';
import { defineTool } from '../agent/tool.js';
import { escapeForSlack } from '../preview-text.js';
import type { NotesStore } from './ports.js';

/** Characters of a note quoted in a preview. */
const QUOTED = 200;

export function createDeleteNoteTool(notes: NotesStore) {
  return defineTool({
    name: 'delete_note',
    description: 'Deletes a workspace note by its id (the number after # in list_notes).',
    parameters: z.object({ id: z.number().int().positive().describe('The note id') }),
    needsApproval: true,
    execute: async ({ id }, context) =>
      (await notes.delete(context.teamId, id)) ? `Deleted note #${id}.` : `There is no note #${id}.`,
    // From the notes as they are now: the approver sees which text goes, or that there is nothing to delete.
    preview: async ({ id }, context) => {
      const note = (await notes.list(context.teamId)).find((each) => each.id === id);
      if (!note) return `Deletes nothing: there is no note #${id}.`;
      const text = note.text.length > QUOTED ? `${note.text.slice(0, QUOTED)}…` : note.text;
      return `Deletes note #${id}: '${escapeForSlack(text.replace(/\s+/g, ' '))}'`;
    },
  });
}
