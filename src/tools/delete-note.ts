import { z } from 'zod';
import { defineTool } from '../agent/tool.js';
import type { NotesStore } from './ports.js';

export function createDeleteNoteTool(notes: NotesStore) {
  return defineTool({
    name: 'delete_note',
    description: 'Deletes a workspace note by its id (the number after # in list_notes).',
    parameters: z.object({ id: z.number().int().positive().describe('The note id') }),
    needsApproval: true,
    execute: async ({ id }, context) =>
      (await notes.delete(context.teamId, id)) ? `Deleted note #${id}.` : `There is no note #${id}.`,
  });
}
