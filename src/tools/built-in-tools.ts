import type { AgentTool } from '../agent/tool.js';
import type { Clock } from '../clock.js';
import { createCreateNoteTool } from './create-note.js';
import { createDeleteNoteTool } from './delete-note.js';
import { createGetCurrentTimeTool } from './get-current-time.js';
import { createListNotesTool } from './list-notes.js';
import type { ChannelPoster, NotesStore } from './ports.js';
import { createPostMessageTool } from './post-message.js';

/** The tools every install has; their names are part of the product's interface (DESIGN.md section 5). */
export function createBuiltInTools(deps: {
  clock: Clock;
  notes: NotesStore;
  poster: ChannelPoster;
  /** The policy's opt-in to link previews on `post_message`'s messages. */
  postMessageLinkPreviews?: boolean;
}): AgentTool[] {
  return [
    createGetCurrentTimeTool(deps.clock),
    createListNotesTool(deps.notes),
    createCreateNoteTool(deps.notes),
    createDeleteNoteTool(deps.notes),
    createPostMessageTool(deps.poster, { linkPreviews: deps.postMessageLinkPreviews ?? false }),
  ];
}
