import type { ApprovalRecord, CardLocation } from '../approvals/approval.js';
import type { GroupDirectory } from '../approvals/ports.js';
import type { OrganisationDirectory } from '../approvals/workspace-reach.js';
import type { SurfaceKind } from '../surfaces.js';
import type { ChannelPoster } from '../tools/ports.js';

/*
 * What the core needs of a chat surface (the Slack bot, the terminal): where a conversation lives, what comes
 * in from it, and what a thread says and shows. Implemented in `src/slack` and `src/cli`.
 */

/** Where a conversation lives in Slack (or the terminal). */
export interface ThreadRef {
  teamId: string;
  /**
   * The workspace's Enterprise Grid organisation, when Slack named one (absent outside Grid): which workspaces
   * reach its requests (see workspace-reach.ts), and whose org-wide install may answer for the team.
   */
  enterpriseId?: string | undefined;
  channelId: string;
  threadTs: string;
}

export interface IncomingMessage extends ThreadRef {
  userId: string;
  text: string;
  messageTs: string;
}

/** Someone clicked Slack's stop button in a thread. */
export interface StopRequest extends ThreadRef {
  userId: string;
}

/**
 * Who is in a channel, as the chat surface knows it (Slack: `conversations.members`). False when the surface
 * cannot say (a failed lookup): nobody is let through on an answer that is not there.
 */
export interface ChannelMembership {
  isMember(input: { teamId: string; channelId: string; userId: string }): Promise<boolean>;
}

/** A streamed answer is addressed to the person who asked (Slack requires it outside DMs). */
export interface AnswerTarget extends ThreadRef {
  recipientUserId?: string;
}

/** Where progress shows: the thread, and the user's message for the fallback reaction. */
export interface ProgressTarget extends ThreadRef {
  messageTs?: string;
  /** The session's title, when the thread's work starts from a message (used where the session is new). */
  title?: string | undefined;
  /** Who started the work. */
  initiatorUserId?: string;
}

/**
 * Shows what the bot does in a thread: working, waiting for a person, or done. Best effort: failures are
 * logged, never thrown, never delay an answer.
 */
export interface Progress {
  /** Working; `status` says on what, where the surface can show text ("is running list_notes…"). */
  set(status: string): void;
  /** Waiting for a person (an approval); resolves once Slack was told (or refused). */
  suspend(): Promise<void>;
  /** Removes every sign of work; resolves once Slack was told (or refused). */
  clear(): Promise<void>;
}

/** One tool call shown as a task in a streamed answer; the same `id` updates it. */
export interface TaskUpdate {
  id: string;
  title: string;
  status: 'pending' | 'in_progress' | 'complete' | 'error';
  /** A short result (at most 256 characters), never the call's arguments. */
  output?: string;
}

/** An answer written while the model produces it. Never throws; falls back to plain messages by itself. */
export interface AnswerStream {
  append(text: string): void;
  /**
   * Shows a tool call as a task in the answer, after the text appended so far; text appended later follows it.
   * Optional: a surface without tasks keeps ending the answer at a tool call.
   */
  task?(update: TaskUpdate): void;
  /**
   * The last `text` appended was cut off (the model's connection broke mid-answer): what of it was not shown
   * yet is dropped, what was shown is marked as cut off, and text appended later (the answer asked again)
   * follows the mark. Optional: without it the cut text stays as it is.
   */
  cut?(text: string): void;
  /** Ends the answer; resolves with the text Slack could not be made to show ('' once all of it is). */
  finish(): Promise<string>;
  /**
   * Ends the answer where it is, dropping what was not shown yet (someone stopped the work; Slack may have
   * stopped the message already), with `note` after what was shown, when something was. Optional: without it
   * the answer is finished.
   */
  abandon?(note?: string): Promise<void>;
}

/** A message read back from a thread, for context. */
export interface ThreadMessage {
  ts: string;
  /** Slack user id of the author, when a person wrote it. */
  userId?: string;
  /** Name of the bot or app that wrote it, when one did. */
  botName?: string;
  text: string;
}

/** Says things in a thread. The Slack adapter implements it; so can a terminal. */
export interface ThreadPoster {
  postText(thread: ThreadRef, text: string): Promise<void>;
  /**
   * Posts a model's answer (Markdown), split into several messages when it is long. Optional: a surface without
   * it (a terminal) gets plain `postText`.
   */
  postAnswer?(thread: ThreadRef, text: string, delivery?: AnswerDelivery): Promise<void>;
}

/** Which answer is posted, so that nothing of it is shown twice. */
export interface AnswerDelivery {
  /** The run whose last message this is. */
  runId?: string;
  /**
   * When the answer was first owed, once it is owed past a first try (or taken over from a process that
   * stopped): what the thread already shows of it is not posted again.
   */
  owedSince?: number;
}

/** Shows the work while it happens. Optional: a surface without it (a terminal) shows only what is posted. */
export interface WorkDisplay {
  startProgress?(target: ProgressTarget): Progress;
  streamAnswer?(target: AnswerTarget): AnswerStream;
}

/** Reads a thread back, for the context of a thread the bot joins mid-way. Optional: a terminal has none. */
export interface ThreadHistory {
  /** Up to `limit` messages of the thread older than `before`, oldest first. */
  readThread?(thread: ThreadRef, options: { before: string; limit: number }): Promise<ThreadMessage[]>;
}

/** Posts approval cards. */
export interface CardPoster {
  /** Posts the approval card; resolves with the message ts. */
  postApprovalCard(approval: ApprovalRecord): Promise<CardLocation>;
  /**
   * The request's card if it is in its thread already, posted by a try whose answer or record was lost (its
   * copies are posted now if that try did not get to them). Asked before a card is posted again. Optional: a
   * surface without it (a terminal) loses no post.
   */
  adoptPostedCard?(approval: ApprovalRecord): Promise<CardLocation | undefined>;
}

/** Changes approval cards after a decision. */
export interface CardUpdater {
  /** Re-renders every copy of the request's card from the state stored now. */
  updateApprovalCard(approval: ApprovalRecord, options?: CardUpdate): Promise<void>;
}

/** What the conversation service says and shows in a thread: every thread role of a surface. */
export type ThreadSurface = ThreadPoster & WorkDisplay & ThreadHistory & CardPoster & CardUpdater;

/** Where a card is shown (said in the core's approvals, which keep it with a decision). */
export type { CardLocation };

export interface CardUpdate {
  /** Where a click saw the thread card, when its ts was never stored (a crash right after posting). */
  fallback?: CardLocation;
  /** Approvals so far, used only when the store cannot say. */
  approvers?: readonly string[];
  /** The decision was "Approve for this thread". */
  standing?: boolean;
}

/** What a surface (the Slack bot, the terminal) gives the core to speak through. */
export interface SurfaceAdapters {
  /** Where conversations are spoken in. */
  surface: ThreadSurface & ChannelPoster;
  /** Whose conversations these are. */
  surfaceKind: SurfaceKind;
  /** The surface that updates cards after a decision (Slack: a client that never waits out a rate limit). */
  decisionSurface?: CardUpdater;
  /** Slack user groups, for rules that name one. */
  groups?: GroupDirectory;
  /** Channel members, for who may stop a thread's work; without it only the thread's starter may. */
  channelMembers?: ChannelMembership;
  /** Which workspaces belong to an Enterprise Grid organisation; without it, as each payload names it. */
  organisations?: OrganisationDirectory;
  systemPrompt: string;
}
