/** An Approve (or Approve for this thread) click, as plain data: the button and the verified clicker. */
export interface ApprovalClick {
  /** The button's value, as Slack sent it (decoded where the click is decided). */
  value: string | undefined;
  /** "Approve for this thread". */
  standing: boolean;
  userId: string;
  teamId: string | undefined;
  /** The Enterprise Grid organisation Slack signed with the click (absent outside Grid). */
  enterpriseId?: string | undefined;
  /** The channel, message and thread of the clicked card (none for a click in App Home). */
  channelId: string | undefined;
  messageTs: string | undefined;
  threadTs: string | undefined;
}

/**
 * A request from Slack that changes something, as accepted: its key (an event's id, or a digest of a signed
 * request's timestamp and signature) and, for an Approve click, the click, kept until it is decided.
 */
export interface AcceptedRequest {
  key: string;
  click?: ApprovalClick;
}

/** A click accepted and not yet decided, to be decided where it is picked up. */
export interface InboxClick {
  key: string;
  click: ApprovalClick;
}

/**
 * What the bot remembers about the requests it accepted, shared by every process: each key is accepted once
 * (a replay within Slack's 5-minute window changes nothing), and a click is kept from before its ack until it
 * is decided, so a process that dies after the ack loses no decision.
 */
export interface RequestLedger {
  /**
   * Records the requests in one transaction, before they are answered; for each, true when its key was new
   * (false: a replay, to be answered and ignored). A click is leased to this process until it is decided.
   */
  accept(requests: readonly AcceptedRequest[]): Promise<boolean[]>;
  /**
   * Forgets a request accepted without a click that was not taken in after all (refused before any listener
   * ran, say because its workspace's installation could not be read), so that Slack's retry of it is taken.
   */
  forget(key: string): Promise<void>;
  /** The click under `key` was decided (or refused): nobody picks it up again. */
  clickDecided(key: string): Promise<void>;
  /**
   * Clicks accepted and not decided whose lease ran out, or whose process is gone, leased now to this process
   * (each is taken by one process), at most `limit`.
   */
  takeOverdueClicks(limit: number): Promise<InboxClick[]>;
  /** Forgets requests accepted before `before`, except clicks not decided yet. */
  prune(before: number): Promise<void>;
}

/** Slack refuses a request whose timestamp is more than this far from now: a replay must come within it. */
export const SIGNED_REQUEST_WINDOW_MS = 5 * 60_000;

/** Accepted requests are remembered this long: the window, either way, and a margin for clocks. */
export const ACCEPTED_REQUEST_KEEP_MS = 2 * SIGNED_REQUEST_WINDOW_MS + 5 * 60_000;
