import type { ApprovalRecord, ApprovalRule, ApprovalStatus } from '../approvals/approval.js';
import type { LimitCheck } from '../approvals/approval-limits.js';
import type { ApprovalReview } from '../approvals/approval-review.js';
import type { AuditInput } from '../audit/audit-event.js';
import { AppError } from '../errors.js';
import type { HistoryItem, StoredItem, SummaryItem } from './history.js';
import type { RunState } from './run-state.js';

export const RUN_STATUSES = ['running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

/**
 * Runs not yet ended: one waiting for a decision resumes from its history and arguments, so retention leaves
 * their content alone.
 */
export const UNFINISHED_RUN_STATUSES: readonly RunStatus[] = ['running', 'paused'];

export interface RunRecord {
  id: string;
  conversationId: string;
  status: RunStatus;
  /** Serialised run state, parsed by the runner (which refuses unknown versions). */
  state: string;
  requesterId: string;
  teamId: string;
  /** The Enterprise Grid organisation of the run's conversation; absent outside Grid. */
  enterpriseId?: string | undefined;
  channelId: string;
  threadTs: string;
  /**
   * The token of the claim under which this process drives the run, when it holds the run's lease; null when
   * another process does, or nobody.
   */
  leaseToken: string | null;
}

/** A claim on a running run: every write of the run carries it, and only the claim held now may write. */
export interface RunLease {
  runId: string;
  token: string;
}

/** The claim a run record was read under (an empty token, which never matches, when this process has none). */
export function leaseOf(run: Pick<RunRecord, 'id' | 'leaseToken'>): RunLease {
  return { runId: run.id, token: run.leaseToken ?? '' };
}

export interface NewApproval {
  id: string;
  callId: string;
  toolName: string;
  arguments: string;
  argumentsHash: string;
  rule: ApprovalRule;
  expiresAt: number | null;
  remindAt: number | null;
  /** What the call would do (see `ApprovalRecord.preview`), stored with it so every process shows the same. */
  preview?: string;
  /** The agents a nested agent's call was made through, outermost first (none: the bot's own agent's call). */
  agentChain?: readonly string[];
  /**
   * Set when the call is approved without a person deciding it now: by a standing approval (stored as approved
   * by its grantor, pointing to the request that granted it), or by the reviewer (`reviewerMayApprove`).
   */
  automatic?: { decidedBy: string; originApprovalId: string | null };
  /** The reviewer's note, stored with the request. */
  review?: ApprovalReview;
  /**
   * The limits the request is counted against (approval-limits.ts). The store counts and records it in the
   * transaction that stores it; past a limit it is stored refused (`cancelled`) or for admins only.
   */
  limits?: LimitCheck[];
}

/** An approval's final status and result, recorded with the state change that settles it. */
export interface SettledApproval {
  id: string;
  status: ApprovalStatus;
  result: string;
}

/**
 * Thrown by a run store's write when this process no longer holds the run's lease: it stalled past the lease
 * and another process took the run over. The run is not ended: its new driver goes on with it.
 */
export class RunHandedOver extends AppError {
  readonly runId: string;

  constructor(runId: string) {
    super('run.handed_over', `Run ${runId} is now driven by another process`);
    this.runId = runId;
  }
}

/*
 * Persistence of runs, split by what each user does with it. Each method is one transaction: the state change
 * and its audit events are committed together or not at all. Writes to a run carry the claim it was read under
 * and succeed only while that claim holds the run's lease (this process started the run, or claimed it with a
 * decision, an expiry or recovery, and has not lost it since); otherwise they throw `RunHandedOver` and change
 * nothing.
 */

/** What the runner reads to take a run up where it was. */
export interface RunLoader {
  getRun(runId: string): Promise<RunRecord | undefined>;
  loadHistory(conversationId: string): Promise<StoredItem[]>;
  approvalsForTurn(runId: string, turn: number): Promise<ApprovalRecord[]>;
}

/** What the runner writes at the steps of a run: a model turn, a pause, the end. */
export interface TurnRecorder {
  /**
   * Appends the items of a model turn (its message and tool calls, before any call runs), creates its approvals
   * (pending, each owed a card; or approved when a standing approval covers them) and saves the state and
   * status. A `completed` run gives up its lease, and its `reply` is owed to the thread.
   */
  saveTurn(
    lease: RunLease,
    input: {
      state: RunState;
      status: RunStatus;
      items: HistoryItem[];
      approvals: NewApproval[];
      audit: AuditInput[];
      /** The run's last message, owed to the thread until it is posted (with status `completed`). */
      reply?: string;
    },
  ): Promise<ApprovalRecord[]>;
  /**
   * Appends a summary of the conversation's older items, written before a model call of the run. Only the
   * history changes: a run stopped before this is stored (the process died) writes the summary again next time.
   */
  saveSummary(lease: RunLease, item: SummaryItem): Promise<void>;
  /**
   * Pauses the running run (running -> paused, with `audit`, giving up the lease) when a call of `turn` still
   * waits for a decision; false when none does. One transaction, so a decision either sees the run paused and
   * claims it, or was taken before and the caller settles it. Throws `RunStopped` (and changes nothing) when
   * someone asked to stop the run meanwhile: a stop seen by nobody before the pause would leave the run waiting.
   */
  pauseIfPending(lease: RunLease, turn: number, audit: AuditInput[]): Promise<boolean>;
  /**
   * Ends the run: completed, failed or cancelled (with the reason), giving up the lease. Approvals of the run
   * that the end cancels (see `cancelledByRunEnd`) become `cancelled` with the reason, each with the audit
   * event `cancelAudit` builds; returns them.
   */
  finishRun(
    lease: RunLease,
    input: {
      status: RunStatus;
      error: string | null;
      audit: AuditInput[];
      cancelAudit: (approval: ApprovalRecord) => AuditInput;
      /** The sentence owed to the thread until it is posted. */
      reply?: string;
      /** The state to keep, when it changes as the run ends (the conversations of nested agents dropped). */
      state?: RunState;
    },
  ): Promise<ApprovalRecord[]>;
}

/** What settling the calls of a paused turn writes: each execution claimed, each output recorded. */
export interface CallRecorder {
  /** Compare-and-set approved -> executing; false when the call was claimed already. */
  markExecuting(lease: RunLease, approvalId: string, audit: AuditInput[]): Promise<boolean>;
  /**
   * Records one tool output of the paused turn (for the thread's history; null when it is a nested agent's,
   * kept in the state), its approval's final status, and the advanced state.
   */
  saveToolOutput(
    lease: RunLease,
    input: {
      state: RunState;
      item: Extract<HistoryItem, { kind: 'tool_output' }> | null;
      approval: SettledApproval | null;
      audit: AuditInput[];
    },
  ): Promise<void>;
}

/** Whether someone asked to stop a run: the runner checks before every step, its driver polls. */
export interface StopRequests {
  /** Who asked to stop the run (see `StopStore.requestStop` of the conversations), when someone did. */
  stopRequest(runId: string): Promise<string | undefined>;
}

/** What the process driving a run does to keep driving it. */
export interface LeaseRenewal {
  /**
   * Extends this process's lease on a run it drives; false when another process holds the running run now
   * (true, with nothing to extend, once the run paused or ended).
   */
  renewLease(runId: string): Promise<boolean>;
}

/** What the runner needs of the store: load a run, record its turns and calls, see stop requests. */
export type RunnerStore = RunLoader & TurnRecorder & CallRecorder & StopRequests;

/** Every run port, as the database implements them in one store. */
export type RunStore = RunnerStore & LeaseRenewal;

/**
 * Thrown inside a run's drive when someone asked to stop it: nothing more executes and the model is not called
 * again; the runner ends the run `cancelled` with `by` as the actor.
 */
export class RunStopped extends AppError {
  readonly runId: string;
  readonly by: string;

  constructor(runId: string, by: string) {
    super('run.stopped', `Run ${runId} was stopped by ${by}`);
    this.runId = runId;
    this.by = by;
  }
}
