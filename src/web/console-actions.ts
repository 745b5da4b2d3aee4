import { type ApprovalRecord, callChain, decisionOptions } from '../approvals/approval.js';
import type { DecisionResult } from '../approvals/approval-service.js';
import { type ArgumentChange, diffArguments } from '../approvals/argument-diff.js';
import { type EditResult, prettyJson } from '../approvals/argument-edit-service.js';
import type { ApprovalVoteRecord } from '../approvals/audit-queries.js';
import type { Risk } from '../approvals/risk.js';
import type { StoredAuditEvent } from '../audit/audit-event.js';
import type { ConsoleSession } from '../console/ports.js';
import { redactedArguments, redactText } from '../redact.js';
import { type ConsoleDeps, sessionWorkspace } from './console-deps.js';

/** Pending requests read at most per list (the decidable ones are a subset of these). */
const PENDING_SCAN = 1000;

/** A request as the console shows it: what the card shows, redacted the same way. */
export interface ApprovalView {
  id: string;
  tool: string;
  /** The nested agents whose call this is, outermost first; empty for the bot's own agent. */
  agentChain: string[];
  /** The call as the card names it: "triage → create_note", or the tool alone. */
  call: string;
  status: ApprovalRecord['status'];
  requester: string;
  /** The arguments as pretty JSON, secrets redacted (the edited ones when a person rewrote them). */
  arguments: string;
  editedArguments: string | null;
  channel: string;
  thread: string;
  threadUrl: string;
  /** The run that asked, whose timeline is `/console/runs/{runId}`. */
  runId: string;
  rule: { approvers: ApprovalRecord['rule']['approvers']; quorum: number; appliedRule: string | null };
  /** What the call would do, as plain text (the card's mrkdwn preview with its escapes undone); null: none. */
  preview: string | null;
  /** The risk the policy gives the request; null: none given. */
  risk: Risk | null;
  /** What a person changed before approving, field by field (redacted); empty when nothing was edited. */
  changes: ArgumentChange[];
  /** Who approved so far (a request that needs several approvals waits for the rest). */
  approvedBy: string[];
  /** What a decider may do besides Approve and Reject. */
  offers: { standing: boolean; edit: boolean };
  createdAt: string;
  expiresAt: string | null;
  decidedBy: string | null;
  decidedAt: string | null;
  reason: string | null;
  /** The reviewer's note, written by a model (`writtenBy: 'model'`); null when no review ran or it failed. */
  review: { writtenBy: 'model'; summary: string; flags: string[]; structured: boolean } | null;
}

export interface ApprovalDetailView extends ApprovalView {
  votes: { user: string; vote: ApprovalVoteRecord['vote']; at: string }[];
  /** The request's trail in the audit log, oldest first. */
  events: { seq: number; at: string; kind: string; actor: string }[];
  /** Whether the signed-in person may decide it now. */
  mayDecide: boolean;
  /** The arguments as sent, to edit before approving: only for a person who may decide (as Slack's editor). */
  draft?: string;
  /** Whether this admin may approve it by breaking glass (the rule refuses them; see break-glass.ts). */
  mayBreakGlass: boolean;
}

export function approvalView(approval: ApprovalRecord, approvedBy: string[] = []): ApprovalView {
  const applied = approval.rule.appliedRule;
  return {
    id: approval.id,
    tool: approval.toolName,
    agentChain: approval.agentChain ?? [],
    call: callChain(approval),
    status: approval.status,
    requester: approval.requesterId,
    arguments: redactedArguments(approval.arguments, 2),
    editedArguments: approval.editedArguments ? redactedArguments(approval.editedArguments, 2) : null,
    channel: approval.channelId,
    thread: approval.threadTs,
    runId: approval.runId,
    threadUrl: `https://app.slack.com/client/${approval.teamId}/${approval.channelId}/thread/${approval.channelId}-${approval.threadTs}`,
    rule: {
      approvers: approval.rule.approvers,
      quorum: approval.rule.quorum,
      appliedRule: applied ? `${applied.place} (${applied.when})` : null,
    },
    preview: approval.preview ? plainText(approval.preview) : null,
    risk: approval.rule.risk ?? null,
    changes: approval.editedArguments ? diffArguments(approval.arguments, approval.editedArguments) : [],
    approvedBy,
    offers: decisionOptions(approval.rule),
    createdAt: iso(approval.createdAt),
    expiresAt: approval.expiresAt === null ? null : iso(approval.expiresAt),
    decidedBy: approval.decidedBy,
    decidedAt: approval.decidedAt === null ? null : iso(approval.decidedAt),
    reason: approval.reason === null ? null : redactText(approval.reason),
    review: approval.review
      ? {
          writtenBy: 'model',
          summary: redactText(approval.review.summary),
          flags: approval.review.flags.map(redactText),
          structured: approval.review.structured,
        }
      : null,
  };
}

/** Slack's three escapes undone: the page escapes for HTML itself. */
function plainText(mrkdwn: string): string {
  return mrkdwn.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/**
 * The pending requests this person may decide, oldest first: the same question App Home asks (no
 * conversation, so only rules that name them, as a user, a group member, an admin or through a delegation).
 */
export async function decidableRequests(
  deps: ConsoleDeps,
  session: ConsoleSession,
): Promise<ApprovalRecord[]> {
  const pending = await deps.queries.pending(session.teamId, { limit: PENDING_SCAN, offset: 0 });
  const ids = await deps.deciders.decidableFromHome(pending.items, session.userId, sessionWorkspace(session));
  return pending.items.filter((approval) => ids.has(approval.id));
}

/** Requests as the console shows them, each with who approved it so far. */
export async function withVotes(
  deps: ConsoleDeps,
  approvals: readonly ApprovalRecord[],
): Promise<ApprovalView[]> {
  return Promise.all(
    approvals.map(async (a) => approvalView(a, a.rule.quorum > 1 ? await deps.votes.approvers(a.id) : [])),
  );
}

/** One request in full, when this person may see it; undefined for an unknown one too (they look the same). */
export async function requestDetail(
  deps: ConsoleDeps,
  session: ConsoleSession,
  approvalId: string,
): Promise<ApprovalDetailView | undefined> {
  const approval = await deps.edits.readable(approvalId, session.teamId, {
    userId: session.userId,
    channelId: undefined,
  });
  if (!approval) return undefined;
  const detail = await deps.queries.detail(session.teamId, approvalId);
  const right =
    approval.status === 'pending'
      ? (await deps.deciders.decidableFromHome([approval], session.userId, sessionWorkspace(session))).has(
          approval.id,
        )
      : false;
  const votes = detail?.votes ?? [];
  return {
    ...approvalView(
      approval,
      votes.filter((v) => v.vote === 'approve').map((v) => v.userId),
    ),
    votes: (detail?.votes ?? []).map((v) => ({ user: v.userId, vote: v.vote, at: iso(v.at) })),
    events: (detail?.events ?? []).map(eventLine),
    mayDecide: right,
    mayBreakGlass:
      approval.status === 'pending' && !right
        ? (await deps.deciders.breakGlass(approval, session.userId)).ok
        : false,
    ...(right ? { draft: prettyJson(approval.arguments) } : {}),
  };
}

/** A decision as the API and the decide page take it. */
export interface DecisionInput {
  decision: 'approve' | 'reject';
  reason?: string | undefined;
  /** Edited arguments (JSON text), checked against the tool's schema; approve only. */
  arguments?: string | undefined;
  /** "Approve for this thread": later calls of the same tool in the conversation are approved too. */
  standing?: boolean | undefined;
  /** Break glass: an admin approves what the rule refuses them, with this justification. */
  breakGlass?: string | undefined;
}

/** What a decision came to, in HTTP terms: the status and a code and a sentence for the person. */
export interface DecisionAnswer {
  status: 200 | 400 | 403 | 409 | 500;
  code: string;
  message: string;
}

/**
 * Decides a request from the web: the same service and compare-and-set as a click in Slack (so a web click
 * racing a Slack click is one decision), recorded with `surface: "web"`; what follows (every card, the run,
 * App Home) is handed to the same follow-up.
 */
export async function decideFromWeb(
  deps: ConsoleDeps,
  session: ConsoleSession,
  approvalId: string,
  input: DecisionInput,
): Promise<DecisionAnswer> {
  const who = { approvalId, userId: session.userId, teamId: session.teamId, channelId: undefined };
  const standing = input.decision === 'approve' && (input.standing ?? false);
  let result: EditResult;
  try {
    if (input.decision === 'approve' && input.arguments !== undefined)
      result = await deps.edits.submit({ ...who, json: input.arguments, surface: 'web' });
    else
      result = await deps.approvals.decide({
        ...who,
        vote: input.decision,
        reason: input.decision === 'reject' ? input.reason?.trim() || null : null,
        ...(standing ? { standing } : {}),
        ...(input.breakGlass !== undefined ? { breakGlass: { justification: input.breakGlass } } : {}),
        surface: 'web',
      });
  } catch (error) {
    deps.logger.error('web decision could not be recorded', { approvalId, error: String(error) });
    return {
      status: 500,
      code: 'not_recorded',
      message: 'Your decision could not be recorded; nothing changed. Try again.',
    };
  }
  // An admin breaking glass sees why it was refused (a justification too short, a tool that forbids it).
  if (input.breakGlass !== undefined && result.kind === 'not_allowed' && !result.quiet)
    return { status: 400, code: 'break_glass_refused', message: result.message };
  return answer(deps, result, standing);
}

function answer(deps: ConsoleDeps, result: EditResult | DecisionResult, standing: boolean): DecisionAnswer {
  switch (result.kind) {
    case 'decided':
      deps.work.settled({
        kind: 'decided',
        approval: result.approval,
        runClaimed: result.runClaimed,
        standing,
      });
      return {
        status: 200,
        code: result.approval.status,
        message: `The request is ${result.approval.status}.`,
      };
    case 'counted':
      deps.work.settled({ kind: 'counted', approval: result.approval, approvers: result.approvers });
      return {
        status: 200,
        code: 'counted',
        message: `Your approval is counted (${result.approvers.length} of ${result.approval.rule.quorum}).`,
      };
    case 'invalid':
      return { status: 400, code: 'invalid_arguments', message: result.message };
    case 'not_found':
      return NOT_PERMITTED;
    case 'not_allowed':
      return NOT_PERMITTED;
    case 'already_voted':
      return { status: 409, code: 'already_voted', message: 'You have already approved this request.' };
    case 'already_decided':
      return {
        status: 409,
        code: 'already_decided',
        message: `This request was ${result.approval.status} already${result.approval.decidedBy ? ` by ${result.approval.decidedBy}` : ''}.`,
      };
  }
}

/** The answer to a request this person may not see or decide, and to an unknown one alike. */
export const NOT_PERMITTED: DecisionAnswer = {
  status: 403,
  code: 'not_permitted',
  message: 'You may not see or decide this request, or it does not exist.',
};

function eventLine(event: StoredAuditEvent): ApprovalDetailView['events'][number] {
  return { seq: event.seq, at: iso(event.at), kind: event.kind, actor: event.actor };
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
