import type { AuditInput } from '../audit/audit-event.js';
import type { SurfaceKind } from '../surfaces.js';
import type { ApprovalRecord, ApprovalRule, CardLocation } from './approval.js';
import type { RemovedWorkspaces } from './removed-workspaces.js';
import type { Workspace } from './team-admins.js';

export type Vote = 'approve' | 'reject';

export type VoteResult =
  /** The vote settled the request (approved with quorum reached, or rejected). */
  | { kind: 'decided'; approval: ApprovalRecord; runClaimed: boolean }
  /** Counted, but more approvals are needed. */
  | { kind: 'counted'; approval: ApprovalRecord; approvers: string[] }
  | { kind: 'already_voted'; approval: ApprovalRecord }
  | { kind: 'already_decided'; approval: ApprovalRecord };

export interface ApprovalStore {
  get(approvalId: string): Promise<ApprovalRecord | undefined>;
  /**
   * One transaction, holding the run and then the approval: records the person's vote, settles the request as
   * `tallyVotes` says, and when `turnSettled` claims the run (paused -> running, leased to this process) so
   * that exactly one caller, in any process, resumes it.
   */
  vote(input: {
    approvalId: string;
    userId: string;
    vote: Vote;
    reason: string | null;
    /** Grants "approve for this thread" when the vote approves the request. */
    standing: boolean;
    /** Stored with the approval when the vote approves it; the edited arguments are what executes. */
    editedArguments: string | null;
    /** The card clicked, never recorded (`cardFallback`): kept with the update the vote owes its card. */
    cardFallback?: CardLocation | null;
    /** The person who delegated deciding to the voter, when the vote was cast through a delegation. */
    onBehalfOf?: string | null;
    /** An admin breaking glass: the vote settles the request as approved whatever the quorum, marked so. */
    breakGlass?: { justification: string } | null;
    audit: AuditInput[];
  }): Promise<VoteResult>;
  /** Approvers who voted approve so far, in order. */
  approvers(approvalId: string): Promise<string[]>;
  /** The conversation's requests still waiting for a decision, oldest first. */
  pendingIn(conversationId: string): Promise<ApprovalRecord[]>;
  recordAudit(events: AuditInput[]): Promise<void>;
}

/** Members of a Slack user group (`S…`), for rules that name one. Implementations cache with a short expiry. */
export interface GroupDirectory {
  /** The members of a group of `teamId`'s workspace; an empty set when it cannot be read (fails closed). */
  members(groupId: string, teamId: string): Promise<ReadonlySet<string>>;
}

/** Where a card is shown besides the conversation's thread (the rule's approval channel). */
export interface ExtraCard {
  channelId: string;
  messageTs: string;
  /** Link back to the conversation's thread, when Slack gave one. */
  link: string | null;
}

/** What the Slack layer needs to render every copy of a card from the current state. */
export interface ApprovalCardStore {
  get(approvalId: string): Promise<ApprovalRecord | undefined>;
  approvers(approvalId: string): Promise<string[]>;
  extraCards(approvalId: string): Promise<ExtraCard[]>;
  /** Votes cast through a delegation: voter → the person who delegated. */
  delegatedVotes(approvalId: string): Promise<Record<string, string>>;
  /** Records a copy of the card, with its `approval.card_posted` audit event. */
  addExtraCard(approval: ApprovalRecord, card: ExtraCard): Promise<void>;
}

/**
 * Deadlines of pending requests of one surface's conversations: expiry and reminders. Each method is one
 * transaction of compare-and-sets on rows it locks, passing over rows another process holds, so each deadline
 * fires once whatever the number of processes.
 */
export interface ApprovalTimerStore {
  /**
   * Marks every pending request whose deadline has passed `expired` (pending -> expired), records `audit(a)`
   * with each, and claims the run (paused -> running, leased to this process) when its turn is settled.
   */
  expireDue(
    now: number,
    surface: SurfaceKind,
    audit: (approval: ApprovalRecord) => AuditInput[],
  ): Promise<{ approval: ApprovalRecord; runClaimed: boolean }[]>;
  /**
   * Marks every pending request of the Slack conversations of workspaces the app was removed from
   * `expired` with `reason` (the app was removed from it), as `expireDue` does: `audit(a)` recorded with each,
   * its run claimed when settled.
   */
  expireWorkspace(
    scope: RemovedWorkspaces,
    now: number,
    reason: string,
    audit: (approval: ApprovalRecord) => AuditInput[],
  ): Promise<{ approval: ApprovalRecord; runClaimed: boolean }[]>;
  /**
   * Pending requests whose reminder is due; each one's next reminder is moved to `now + remindAfter` with a
   * compare-and-set, so one period gives at most one reminder whatever the number of callers.
   */
  claimReminders(
    now: number,
    surface: SurfaceKind,
    audit: (approval: ApprovalRecord) => AuditInput[],
  ): Promise<ApprovalRecord[]>;
  /**
   * Pending requests due to be escalated (see `escalationDue`); each is marked escalated (`escalatedAt` in its
   * stored rule) with a compare-and-set on the locked row and `audit(a)` recorded, so it is escalated once.
   */
  claimEscalations(
    now: number,
    surface: SurfaceKind,
    audit: (approval: ApprovalRecord) => AuditInput[],
  ): Promise<ApprovalRecord[]>;
}

/** "Approve for this thread" granted earlier in a conversation. */
export interface StandingApproval {
  grantedBy: string;
  originApprovalId: string;
  /** When it was given: it lasts as long as the tool's rule says (`standingExpiresAfterMs`). */
  grantedAt: number;
}

/** Whether the person who gave a standing approval could still approve the tool's requests today. */
export interface GrantorCheck {
  mayStillGrant(
    rule: ApprovalRule,
    requesterId: string,
    grantedBy: string,
    workspace: Workspace,
  ): Promise<boolean>;
}

export type RevokeResult =
  | { ok: true; toolName: string; grantedBy: string; conversationId: string }
  | { ok: false; reason: 'not_found' | 'not_active' };

/** "Approve for this thread" grants. */
export interface StandingApprovalStore {
  /** The conversation's unrevoked grant for a tool, if any. */
  find(conversationId: string, toolName: string): Promise<StandingApproval | undefined>;
  /**
   * Revokes the grant made by the decision on `approvalId` (one of this workspace's requests), with a
   * compare-and-set on the grant still being active and its audit event in the same transaction.
   */
  revoke(input: { teamId: string; approvalId: string; userId: string; at: number }): Promise<RevokeResult>;
}
