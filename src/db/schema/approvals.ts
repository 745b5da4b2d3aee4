import { APPROVAL_STATUSES } from '../../approvals/approval.js';
import { DECISION_TIME, NOT_PENDING } from './approval-order.js';
import { createdAt, integer, millis, serialId, text, time } from './columns.js';
import { index, table, uniqueIndex } from './table.js';

/** One row per gated tool call. */
export const approvals = table(
  'approvals',
  {
    id: text('id').primaryKey(),
    runId: text('run_id').notNull(),
    conversationId: text('conversation_id').notNull(),
    teamId: text('team_id').notNull(),
    /**
     * Its conversation's Enterprise Grid organisation (null outside Grid): who may reach it from a shared
     * channel, and whose org-wide install answers for the team's.
     */
    enterpriseId: text('enterprise_id'),
    /** The model turn that produced the call; all approvals of one paused turn share it. */
    turn: integer('turn').notNull(),
    callId: text('call_id').notNull(),
    toolName: text('tool_name').notNull(),
    /** The arguments exactly as the model sent them. */
    arguments: text('arguments').notNull(),
    argumentsHash: text('arguments_hash').notNull(),
    /** Arguments as edited by a person before approval, when they were. */
    editedArguments: text('edited_arguments'),
    /**
     * Set when the decision was automatic: the approval whose "Approve for this thread" covered this call.
     * Null for decisions a person made on this request itself.
     */
    originApprovalId: text('origin_approval_id'),
    status: text('status', { enum: APPROVAL_STATUSES }).notNull(),
    requesterId: text('requester_id').notNull(),
    /** The policy rule that applied, as JSON, so later policy changes do not rewrite history. */
    rule: text('rule').notNull(),
    decidedBy: text('decided_by'),
    decidedAt: time('decided_at'),
    reason: text('reason'),
    channelId: text('channel_id').notNull(),
    threadTs: text('thread_ts').notNull(),
    messageTs: text('message_ts'),
    result: text('result'),
    expiresAt: time('expires_at'),
    remindAt: time('remind_at'),
    /** The admin who approved it by breaking glass, and why (see src/approvals/break-glass.ts). */
    breakGlassBy: text('break_glass_by'),
    breakGlassReason: text('break_glass_reason'),
    /** The other admin who acknowledged that break-glass approval afterwards, and when. */
    breakGlassAckedBy: text('break_glass_acked_by'),
    breakGlassAckedAt: time('break_glass_acked_at'),
    /** The reviewer's note (JSON: summary, flags, structured), written by a model before the card was posted. */
    review: text('review'),
    createdAt: createdAt(),
    updatedAt: millis('updated_at'),
    /** What the call would do, as the card shows it (mrkdwn, values escaped); null when there was none. */
    preview: text('preview'),
    /**
     * The agents of the agents file a nested agent's call was made through, outermost first, as a JSON list;
     * null for a call of the bot's own agent.
     */
    agentChain: text('agent_chain'),
  },
  (t) => [
    uniqueIndex('approvals_run_call').on(t.runId, t.callId),
    index('approvals_status').on(t.status),
    // A workspace's pending requests, oldest first (the console's decide list and App Home read them in pages).
    index('approvals_team_status_created').on(t.teamId, t.status, t.createdAt, t.id),
    index('approvals_run_turn').on(t.runId, t.turn),
    // A workspace's decided requests, latest decision first, paged by (time, id) (the console's decided list).
    index('approvals_team_decided').on(t.teamId, DECISION_TIME, t.id).where(NOT_PENDING),
  ],
);

/**
 * "Approve for this thread": later calls of `toolName` in the conversation are approved automatically, until
 * revoked. Granted by the decision on `originApprovalId`.
 */
export const standingApprovals = table(
  'standing_approvals',
  {
    id: serialId(),
    conversationId: text('conversation_id').notNull(),
    toolName: text('tool_name').notNull(),
    grantedBy: text('granted_by').notNull(),
    originApprovalId: text('origin_approval_id').notNull(),
    grantedAt: millis('granted_at'),
    revokedAt: time('revoked_at'),
  },
  (t) => [index('standing_approvals_conversation_tool').on(t.conversationId, t.toolName)],
);

/** Individual votes, for quorum: one per person per approval. */
export const approvalVotes = table(
  'approval_votes',
  {
    approvalId: text('approval_id').notNull(),
    userId: text('user_id').notNull(),
    vote: text('vote', { enum: ['approve', 'reject'] }).notNull(),
    /** Set when the vote was cast through a delegation: the person who delegated. */
    onBehalfOf: text('on_behalf_of'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('approval_votes_user').on(t.approvalId, t.userId)],
);

/** `/approvals delegate @bob until:…`: Bob may decide what the delegator may decide, until then. */
export const delegations = table(
  'delegations',
  {
    id: text('id').primaryKey(),
    teamId: text('team_id').notNull(),
    delegatorId: text('delegator_id').notNull(),
    delegateId: text('delegate_id').notNull(),
    /** Milliseconds: the delegation ends then (the end of the day it names, UTC). */
    until: millis('until'),
    createdAt: createdAt(),
    endedAt: time('ended_at'),
    endedBy: text('ended_by'),
  },
  (t) => [index('delegations_delegate').on(t.teamId, t.delegateId)],
);

/** Copies of an approval card outside the conversation's thread (the rule's approval channel). */
export const approvalCards = table(
  'approval_cards',
  {
    approvalId: text('approval_id').notNull(),
    channelId: text('channel_id').notNull(),
    messageTs: text('message_ts').notNull(),
    /** Permalink to the conversation's thread, shown on the copy. */
    link: text('link'),
    createdAt: createdAt(),
  },
  (t) => [uniqueIndex('approval_cards_message').on(t.approvalId, t.channelId, t.messageTs)],
);
