import type { ApprovalRecord } from '../approvals/approval.js';

/** Where one drive of a run left it. */
export type RunOutcome =
  /** The run paused; these approvals are new and need cards. */
  | { kind: 'paused'; approvals: ApprovalRecord[] }
  /** The run still waits for decisions it asked for earlier. */
  | { kind: 'waiting' }
  | { kind: 'completed'; text: string }
  /**
   * The run ended early; `message` is one sentence for the thread. `cancelledApprovals` were pending or approved
   * and will now never execute: their cards need updating.
   */
  | {
      kind: 'failed' | 'cancelled';
      message: string;
      cancelledApprovals: ApprovalRecord[];
      /** Who stopped the run, when someone did (Slack's stop button). */
      stoppedBy?: string;
    }
  /**
   * Nothing more for this process to do: it stalled past its lease and another process drives the run now, or
   * the run had already ended.
   */
  | { kind: 'handed_over' };
