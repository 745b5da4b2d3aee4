export interface Note {
  id: number;
  text: string;
}

/** Storage of the note tools, per workspace. */
export interface NotesStore {
  list(teamId: string): Promise<Note[]>;
  create(teamId: string, text: string, createdBy: string): Promise<Note>;
  /** False when no note of that id exists in the workspace. */
  delete(teamId: string, id: number): Promise<boolean>;
}

/** Posting as the bot, for post_message. */
export interface ChannelPoster {
  /** Posts `text`; Slack shows no link previews unless `linkPreviews` (the policy's opt-in). */
  post(channel: string, text: string, options?: { linkPreviews?: boolean }): Promise<void>;
}
