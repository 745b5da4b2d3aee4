import { z } from 'zod';
import { defineTool } from '../agent/tool.js';
import type { NotesStore } from './ports.js';

export function createListNotesTool(notes: NotesStore) {
  return defineTool({
    name: 'list_notes',
    description: "Lists the workspace's notes, one per line as #<id> <text>.",
    parameters: z.object({}),
    needsApproval: false,
    execute: async (_args, context) => {
      const all = await notes.list(context.teamId);
      if (all.length === 0) return 'There are no notes.';
      return all.map((note) => `#${note.id} ${note.text}`).join('\n');
    },
  });
}
