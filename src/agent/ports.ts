import type { ApprovalRecord, ApprovalRule, ApprovalStatus } from '../approvals/approval.js';
import type { AuditInput } from '../audit/audit-event.js';
import type { HistoryItem, StoredItem } from './history.js';
import type { RunState } from './run-state.js';

export const RUN_STATUSES = ['running', 'paused', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];

export interface RunRecord {
  id: string;
  conversationId: string;
  status: RunStatus;
  /** Serialised run state, parsed by the runner (which refuses unknown versions). */
  state: string;
  requesterId: string;
  teamId: string;
  channelId: string;
  threadTs: string;
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
  /** Set when a standing approval covers the call: it is stored as approved by the person who granted it. */
  automatic?: StandingApproval;
}

/** "Approve for this thread" granted earlier in a conversation. */
export interface StandingApproval {
  grantedBy: string;
  originApprovalId: string;
}

/** An approval's final status and result, recorded with the state change that settles it. */
export interface SettledApproval {
  id: string;
  status: ApprovalStatus;
  result: string;
}

/**
 * Persistence the runner needs. Each method is one transaction: the state change and its audit events are
 * committed together or not at all.
 */
export interface RunStore {
  getRun(runId: string): RunRecord | undefined;
  loadHistory(conversationId: string): StoredItem[];
  /**
   * Appends the items of a model turn (its message and tool calls, before any call runs), creates its approvals
   * (pending, or approved when a standing approval covers them) and saves the state and status.
   */
  saveTurn(input: {
    runId: string;
    state: RunState;
    status: RunStatus;
    items: HistoryItem[];
    approvals: NewApproval[];
    audit: AuditInput[];
    /** The run's last message, owed to the thread until it is posted (with status `completed`). */
    reply?: string;
  }): ApprovalRecord[];
  /** The conversation's unrevoked "approve for this thread" for a tool, if any. */
  standingApproval(conversationId: string, toolName: string): StandingApproval | undefined;
  approvalsForTurn(runId: string, turn: number): ApprovalRecord[];
  /**
   * Pauses the running run (running -> paused, with `audit`) when a call of `turn` still waits for a
   * decision; false when none does. One transaction, so a decision either sees the run paused and claims it,
   * or was taken before and the caller settles it.
   */
  pauseIfPending(runId: string, turn: number, audit: AuditInput[]): boolean;
  /** Compare-and-set approved -> executing; false when the call was claimed already. */
  markExecuting(approvalId: string, audit: AuditInput[]): boolean;
  /** Records one tool output of the paused turn, its approval's final status, and the advanced state. */
  saveToolOutput(input: {
    runId: string;
    state: RunState;
    item: Extract<HistoryItem, { kind: 'tool_output' }>;
    approval: SettledApproval | null;
    audit: AuditInput[];
  }): void;
  /**
   * Ends the run: completed, failed or cancelled (with the reason). Approvals of the run that are still pending,
   * or approved but not executed, become `cancelled` with the reason, each with the audit event `cancelAudit`
   * builds; returns them.
   */
  finishRun(input: {
    runId: string;
    status: RunStatus;
    error: string | null;
    audit: AuditInput[];
    cancelAudit: (approval: ApprovalRecord) => AuditInput;
    /** The sentence owed to the thread until it is posted. */
    reply?: string;
  }): ApprovalRecord[];
}

export interface Clock {
  now(): number;
}

export type IdGenerator = (prefix: string) => string;
