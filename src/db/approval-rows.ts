import { sql } from 'drizzle-orm';
import { z } from 'zod';
import { APPROVAL_STATUSES, type ApprovalRecord, approvalRuleSchema } from '../approvals/approval.js';
import { type ApprovalReview, approvalReviewSchema } from '../approvals/approval-review.js';
import { readEnum, readNumber, readOptionalNumber, readOptionalString, readString } from './sql/columns.js';
import { type Program, type Row, row, rows } from './sql/program.js';
import type { Dialect } from './sql/sql-database.js';
import { enterpriseOf } from './thread-rows.js';

/** An approvals row as the core sees it; the stored rule JSON passes its schema like any input. */
export function toApprovalRecord(r: Row): ApprovalRecord {
  const preview = readOptionalString(r, 'preview');
  return {
    id: readString(r, 'id'),
    runId: readString(r, 'run_id'),
    conversationId: readString(r, 'conversation_id'),
    teamId: readString(r, 'team_id'),
    ...enterpriseOf(r),
    turn: readNumber(r, 'turn'),
    callId: readString(r, 'call_id'),
    toolName: readString(r, 'tool_name'),
    arguments: readString(r, 'arguments'),
    editedArguments: readOptionalString(r, 'edited_arguments'),
    originApprovalId: readOptionalString(r, 'origin_approval_id'),
    status: readEnum(r, 'status', APPROVAL_STATUSES),
    requesterId: readString(r, 'requester_id'),
    rule: approvalRuleSchema.parse(JSON.parse(readString(r, 'rule'))),
    decidedBy: readOptionalString(r, 'decided_by'),
    decidedAt: readOptionalNumber(r, 'decided_at'),
    reason: readOptionalString(r, 'reason'),
    channelId: readString(r, 'channel_id'),
    threadTs: readString(r, 'thread_ts'),
    messageTs: readOptionalString(r, 'message_ts'),
    result: readOptionalString(r, 'result'),
    expiresAt: readOptionalNumber(r, 'expires_at'),
    createdAt: readNumber(r, 'created_at'),
    ...reviewOf(r),
    ...breakGlassOf(r),
    ...(preview === null ? {} : { preview }),
    ...agentChainOf(r),
  };
}

/** The chain of agents of a nested agent's call (absent for the bot's own agent's, and on older rows). */
function agentChainOf(r: Row): Pick<ApprovalRecord, 'agentChain'> {
  const text = readOptionalString(r, 'agent_chain');
  if (text === null) return {};
  try {
    const parsed = z.array(z.string()).min(1).safeParse(JSON.parse(text));
    return parsed.success ? { agentChain: parsed.data } : {};
  } catch {
    return {};
  }
}

/** The break-glass mark, on rows that have one (absent otherwise, as on rows written before it existed). */
function breakGlassOf(r: Row): Pick<ApprovalRecord, 'breakGlass'> {
  const by = readOptionalString(r, 'break_glass_by');
  if (by === null) return {};
  return {
    breakGlass: {
      by,
      justification: readOptionalString(r, 'break_glass_reason') ?? '',
      acknowledgedBy: readOptionalString(r, 'break_glass_acked_by'),
      acknowledgedAt: readOptionalNumber(r, 'break_glass_acked_at'),
    },
  };
}

/** The stored note, read like any input: one that does not parse (or a row from before notes) has none. */
function reviewOf(r: Row): { review?: ApprovalReview } {
  const text = readOptionalString(r, 'review');
  if (text === null) return {};
  try {
    const parsed = approvalReviewSchema.safeParse(JSON.parse(text));
    return parsed.success ? { review: parsed.data } : {};
  } catch {
    return {};
  }
}

/** One approval, or undefined. */
export function* approvalById(approvalId: string): Program<ApprovalRecord | undefined> {
  const found = yield* row(sql`select * from approvals where id = ${approvalId}`);
  return found ? toApprovalRecord(found) : undefined;
}

/** One approval, locked until the transaction ends (after its run: locks are taken run first, then approval). */
export function* lockApproval(dialect: Dialect, approvalId: string): Program<ApprovalRecord | undefined> {
  const found = yield* row(sql`select * from approvals where id = ${approvalId} ${dialect.forUpdate}`);
  return found ? toApprovalRecord(found) : undefined;
}

/** The approvals of one turn of a run, in call order of creation. */
export function* approvalsOfTurn(runId: string, turn: number): Program<ApprovalRecord[]> {
  const found = yield* rows(
    sql`select * from approvals where run_id = ${runId} and turn = ${turn} order by created_at, call_id`,
  );
  return found.map(toApprovalRecord);
}
