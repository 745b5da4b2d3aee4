import type { Clock } from '../agent/ports.js';
import { readableArguments } from '../agent/runner.js';
import type { AgentTool } from '../agent/tool.js';
import { type AuditInput, auditEvent } from '../audit/audit-event.js';
import type { ApprovalRecord } from './approval.js';
import { mayDecide } from './policy.js';

/** Persistence of edited arguments: a compare-and-set on `pending`, with its audit event, in one transaction. */
export interface ApprovalEditStore {
  get(approvalId: string): ApprovalRecord | undefined;
  /** False when the approval is no longer pending. */
  setEditedArguments(approvalId: string, editedArguments: string, audit: AuditInput[]): boolean;
}

export interface EditArgumentsDeps {
  store: ApprovalEditStore;
  clock: Clock;
  tool: (name: string) => AgentTool | undefined;
  isAdmin: (userId: string) => boolean;
}

export interface EditRequest {
  approvalId: string;
  userId: string;
  teamId: string;
  channelId: string;
  /** The new arguments as JSON text. */
  arguments: string;
}

export type EditResult = { ok: true; approval: ApprovalRecord } | { ok: false; message: string };

/**
 * Replaces the arguments of a pending call before it is approved. Only someone who may decide the request
 * may edit it, and the new arguments must be valid for the tool's schema; the runner then executes the
 * edited arguments (`editedArguments` wins over the model's). The caller approves right after.
 */
export function editApprovalArguments(deps: EditArgumentsDeps, request: EditRequest): EditResult {
  const approval = deps.store.get(request.approvalId);
  if (!approval || approval.teamId !== request.teamId) return { ok: false, message: 'No such request.' };
  if (approval.status !== 'pending') return { ok: false, message: 'This request was already decided.' };
  const permission = mayDecide(approval.rule, approval.requesterId, {
    userId: request.userId,
    isAdmin: deps.isAdmin(request.userId),
    inConversation: request.channelId === approval.channelId,
  });
  if (!permission.ok)
    return {
      ok: false,
      message: `You cannot decide this request. It can be decided by ${permission.approvers}.`,
    };
  const tool = deps.tool(approval.toolName);
  if (!tool) return { ok: false, message: `The tool ${approval.toolName} is no longer available.` };
  const parsed = tool.parseArguments(request.arguments);
  if (!parsed.ok) return { ok: false, message: parsed.error };
  const edited = JSON.stringify(parsed.args);
  const event = auditEvent('approval.edited', {
    at: deps.clock.now(),
    actor: request.userId,
    teamId: approval.teamId,
    conversationId: approval.conversationId,
    runId: approval.runId,
    approvalId: approval.id,
    payload: {
      tool: approval.toolName,
      callId: approval.callId,
      arguments: readableArguments(approval.arguments),
      editedArguments: parsed.args,
    },
  });
  if (!deps.store.setEditedArguments(approval.id, edited, [event]))
    return { ok: false, message: 'This request was already decided.' };
  return { ok: true, approval: { ...approval, editedArguments: edited } };
}
