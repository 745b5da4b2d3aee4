import type { AuditEventRow, RunTrail } from '../approvals/audit-queries.js';
import type { ChainCheckResult } from '../audit/chain-check.js';
import type { ConsoleSession } from '../console/ports.js';
import { iso } from './console-actions.js';
import { type ConsoleDeps, rolesOf } from './console-deps.js';

/** An audit event as the history and a run's timeline show it (its payload as stored: secrets redacted). */
export interface AuditEventView {
  seq: number;
  at: string;
  kind: string;
  actor: string;
  tool: string | null;
  /** The current status of the request the event concerns. */
  outcome: string | null;
  approvalId: string | null;
  runId: string | null;
  conversationId: string | null;
  payload: Record<string, unknown>;
}

export function auditEventView(event: AuditEventRow): AuditEventView {
  return {
    seq: event.seq,
    at: iso(event.at),
    kind: event.kind,
    actor: event.actor,
    tool: event.tool,
    outcome: event.approvalStatus,
    approvalId: event.approvalId,
    runId: event.runId,
    conversationId: event.conversationId,
    payload: event.payload,
  };
}

/** The verification state of the audit chain, as the badge and `GET /console/api/audit/verify` give it. */
export type ChainStateView =
  | { state: 'unchecked' }
  | { state: 'verified'; checkedAt: string; headHash: string }
  | { state: 'broken'; checkedAt: string; seq: number; problem: string; message: string };

export function chainStateView(result: ChainCheckResult | undefined): ChainStateView {
  if (!result) return { state: 'unchecked' };
  const { verdict, checkedAt } = result;
  return verdict.ok
    ? { state: 'verified', checkedAt: iso(checkedAt), headHash: verdict.headHash }
    : {
        state: 'broken',
        checkedAt: iso(checkedAt),
        seq: verdict.seq,
        problem: verdict.problem,
        message: verdict.message,
      };
}

/** What each kind of event is in a run's story: request → card → reminders → decision → tool → answer. */
const STEPS: Record<string, string> = {
  'run.started': 'Request',
  'run.paused': 'Waiting for approval',
  'run.resumed': 'Resumed',
  'approval.requested': 'Approval requested',
  'approval.card_posted': 'Card posted',
  'approval.reminded': 'Reminder',
  'approval.escalated': 'Escalation',
  'approval.refused': 'Refused click',
  'approval.edited': 'Arguments edited',
  'approval.approved': 'Decision',
  'approval.rejected': 'Decision',
  'approval.expired': 'Decision',
  'approval.cancelled': 'Decision',
  'standing.granted': 'Standing approval',
  'delegation.used': 'Delegation used',
  'tool.started': 'Tool started',
  'tool.finished': 'Tool output',
  'tool.outcome_unknown': 'Tool output',
  'tool.not_run': 'Tool output',
  'run.completed': 'Answer',
  'run.failed': 'Failed',
  'run.cancelled': 'Stopped',
  'run.stop_refused': 'Stop refused',
};

export interface RunStepView extends AuditEventView {
  step: string;
}

export interface RunTimelineView {
  runId: string;
  steps: RunStepView[];
  approvals: { id: string; tool: string; status: string }[];
}

export function runTimelineView(runId: string, trail: RunTrail): RunTimelineView {
  return {
    runId,
    steps: trail.events.map((event) => ({ ...auditEventView(event), step: STEPS[event.kind] ?? event.kind })),
    approvals: trail.approvals.map((a) => ({ id: a.id, tool: a.toolName, status: a.status })),
  };
}

/**
 * A run's trail when this person may read it: admins and auditors every run of their workspace, anyone else a
 * run with a request the core's `Deciders.maySee` lets them see. Undefined otherwise, as for an unknown run.
 */
export async function readableRun(
  deps: ConsoleDeps,
  session: ConsoleSession,
  runId: string,
): Promise<RunTimelineView | undefined> {
  const trail = await deps.queries.runTrail(session.teamId, runId);
  if (!trail) return undefined;
  if ((await rolesOf(deps, session)).auditor) return runTimelineView(runId, trail);
  for (const approval of trail.approvals) {
    if (await deps.deciders.maySee(approval, { userId: session.userId, channelId: undefined }))
      return runTimelineView(runId, trail);
  }
  return undefined;
}
