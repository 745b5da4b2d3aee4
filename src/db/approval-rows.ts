import { type ApprovalRecord, approvalRuleSchema } from '../approvals/approval.js';
import type { approvals } from './schema.js';

export type ApprovalRow = typeof approvals.$inferSelect;

/** Validates the stored rule JSON: data read back from the database passes a schema like any input. */
export function toApprovalRecord(row: ApprovalRow): ApprovalRecord {
  return {
    id: row.id,
    runId: row.runId,
    conversationId: row.conversationId,
    teamId: row.teamId,
    turn: row.turn,
    callId: row.callId,
    toolName: row.toolName,
    arguments: row.arguments,
    editedArguments: row.editedArguments,
    originApprovalId: row.originApprovalId,
    status: row.status,
    requesterId: row.requesterId,
    rule: approvalRuleSchema.parse(JSON.parse(row.rule)),
    decidedBy: row.decidedBy,
    decidedAt: row.decidedAt,
    reason: row.reason,
    channelId: row.channelId,
    threadTs: row.threadTs,
    messageTs: row.messageTs,
    result: row.result,
    expiresAt: row.expiresAt,
    createdAt: row.createdAt,
  };
}
