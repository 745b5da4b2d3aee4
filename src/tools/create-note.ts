import { z } from 'zod';
import { defineTool } from '../agent/tool.js';
import type { NotesStore } from './ports.js';

export function createCreateNoteTool(notes: NotesStore) {
  return defineTool({
    name: 'create_note',
    description: 'Adds a note to the workspace notes.',
    parameters: z.object({ text: z.string().min(1).max(4000).describe('The note text') }),
    needsApproval: true,
    execute: async ({ text }, context) => {
      const note = await notes.create(context.teamId, text, context.requesterId);
      return `Created note #${note.id}.`;
    },
  });
}
