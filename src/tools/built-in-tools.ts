import type { AgentTool } from '../agent/tool.js';
import type { Clock } from '../clock.js';
import { AppError } from '../errors.js';
import { createCreateNoteTool } from './create-note.js';
import { createDeleteNoteTool } from './delete-note.js';
import { createGetCurrentTimeTool } from './get-current-time.js';
import { createListNotesTool } from './list-notes.js';
import type { ChannelPoster, NotesStore } from './ports.js';
import { createPostMessageTool } from './post-message.js';

/** What the built-in tools are made of; the bot and the terminal chat build them on their own stores. */
export interface BuiltInToolDeps {
  clock: Clock;
  notes: NotesStore;
  poster: ChannelPoster;
  /** The policy's opt-in to link previews on `post_message`'s messages. */
  postMessageLinkPreviews?: () => boolean;
}

/** Tools by name, each with how to build it; the key is the name the model and the policy file use. */
export type ToolCatalog = Readonly<Record<string, (deps: BuiltInToolDeps) => AgentTool>>;

/**
 * The tools every install has, and the only list of them: the runner gets the tools built from it
 * (`createTools`) and the policy file is checked against its names (`toolNames`), so a tool added here can
 * be given rules at once. Their names are part of the product's interface.
 */
export const BUILT_IN_TOOLS: ToolCatalog = {
  get_current_time: (deps) => createGetCurrentTimeTool(deps.clock),
  list_notes: (deps) => createListNotesTool(deps.notes),
  create_note: (deps) => createCreateNoteTool(deps.notes),
  delete_note: (deps) => createDeleteNoteTool(deps.notes),
  post_message: (deps) => createPostMessageTool(deps.poster, { linkPreviews: deps.postMessageLinkPreviews }),
};

/** The names a policy file may give rules to (besides MCP tools, `SERVER__TOOL`). */
export function toolNames(catalog: ToolCatalog = BUILT_IN_TOOLS): string[] {
  return Object.keys(catalog);
}

/** Builds every tool of the catalog; a tool whose name differs from its key is a programming error. */
export function createTools(catalog: ToolCatalog, deps: BuiltInToolDeps): AgentTool[] {
  return Object.entries(catalog).map(([name, create]) => {
    const tool = create(deps);
    if (tool.name !== name)
      throw new AppError(
        'tool.invalid_definition',
        `Tool "${tool.name}" is listed as "${name}" in its catalog`,
      );
    return tool;
  });
}

export function createBuiltInTools(deps: BuiltInToolDeps): AgentTool[] {
  return createTools(BUILT_IN_TOOLS, deps);
}
