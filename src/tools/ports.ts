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

/**
 * What became of a post: `not_in_channel` when Slack refused it because the bot is not a member of the
 * channel (a person must invite it), `no_slack` when the surface cannot post to channels at all (the
 * terminal chat). Any other failure is thrown.
 */
export type PostOutcome = { kind: 'posted' } | { kind: 'not_in_channel' } | { kind: 'no_slack' };

/** The conversation a tool runs in (the tool context's `teamId`, `channelId` and `threadTs`). */
export interface ConversationThread {
  teamId: string;
  enterpriseId?: string | undefined;
  channelId: string;
  threadTs: string;
}

/** Posting as the bot, for post_message. */
export interface ChannelPoster {
  /**
   * Posts `text` in `teamId`'s workspace (the run's); Slack shows no link previews unless `linkPreviews` (the
   * policy's opt-in).
   */
  post(
    channel: string,
    text: string,
    options: { teamId: string; linkPreviews?: boolean },
  ): Promise<PostOutcome>;
  /** A message in the conversation's own thread: what a person must do before the tool can work. */
  postText(thread: ConversationThread, text: string): Promise<void>;
}
