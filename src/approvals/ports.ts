import type { AuditInput } from '../audit/audit-event.js';
import type { ApprovalRecord } from './approval.js';

export type Vote = 'approve' | 'reject';

export type VoteResult =
  /** The vote settled the request (approved with quorum reached, or rejected). */
  | { kind: 'decided'; approval: ApprovalRecord; runClaimed: boolean }
  /** Counted, but more approvals are needed. */
  | { kind: 'counted'; approval: ApprovalRecord; approvers: string[] }
  | { kind: 'already_voted'; approval: ApprovalRecord }
  | { kind: 'already_decided'; approval: ApprovalRecord };

export interface ApprovalStore {
  get(approvalId: string): ApprovalRecord | undefined;
  /**
   * One transaction: records the person's vote, settles the request with a compare-and-set on `pending` when
   * the vote decides it, and when no call of the paused turn is still pending claims the run (paused ->
   * running) so that exactly one caller resumes it.
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
    audit: AuditInput[];
  }): VoteResult;
  /** Approvers who voted approve so far, in order. */
  approvers(approvalId: string): string[];
  recordAudit(events: AuditInput[]): void;
}
