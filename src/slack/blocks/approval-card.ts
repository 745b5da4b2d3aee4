import type { types } from '@slack/bolt';

type KnownBlock = types.KnownBlock;
type Button = types.Button;

import {
  type ApprovalRecord,
  callChain,
  decisionOptions,
  formatDuration,
  notifiesThread,
} from '../../approvals/approval.js';
import { describeApprovers } from '../../approvals/policy.js';
import { redactedArguments, redactText } from '../../redact.js';
import { encodeApprovalButtonValue } from '../button-value.js';
import { ACTION_IDS } from '../ids.js';
import { escapeMrkdwn, safeMrkdwn, slackDate, truncateVisibly } from '../mrkdwn.js';
import { changesBlocks, judgementBlocks } from './approval-judgement.js';
import { cutWithin, preformatted } from './approval-lines.js';
import { breakGlassCardLine } from './break-glass.js';
import { reviewNoteBlocks } from './review-note.js';

export interface SlackMessage {
  text: string;
  blocks: KnownBlock[];
}

/** Characters of arguments shown on the card; the rest is one click away ("View all arguments"). */
const ARGUMENTS_BUDGET = 2600;
/** Characters of edited arguments shown under the outcome. */
const EDITED_BUDGET = 1500;

/**
 * The approval card: what the agent wants to run, with which arguments, for whom, and either the decision
 * buttons (pending) or the outcome. Pure: `now` is not needed, every time shown comes from the record.
 */
export function buildApprovalCard(
  approval: ApprovalRecord,
  approvers: readonly string[] = [],
  options: {
    standing?: boolean;
    copy?: boolean;
    /** Votes cast through a delegation: voter → who delegated; the card names both. */
    delegated?: Readonly<Record<string, string>>;
    /** Nobody can decide it (only admins may, and none are configured): the card says so and how to fix it. */
    nobodyCanDecide?: boolean;
  } = {},
): SlackMessage {
  const name = (id: string) =>
    `<@${id}>${options.delegated?.[id] ? ` (for <@${options.delegated[id]}>)` : ''}`;
  const pending = approval.status === 'pending';
  const version = `${approval.status}-${approvers.length}`;
  const blocks: KnownBlock[] = [
    {
      type: 'section',
      block_id: `summary-${version}`,
      text: {
        type: 'mrkdwn',
        text: `${pending ? ':lock:' : statusEmoji(approval)} *Approval ${pending ? 'needed' : 'request'}:* \`${callChain(approval)}\``,
      },
    },
    ...judgementBlocks(approval, `judgement-${version}`),
    preformatted(`arguments-${version}`, argumentsText(approval)),
    ...reviewNoteBlocks(approval.review, `review-${version}`),
    {
      type: 'context',
      block_id: `details-${version}`,
      elements: [{ type: 'mrkdwn', text: detailsText(approval, approvers, name) }],
    },
  ];
  const more = argumentsCut(approval) ? [viewAllButton(approval)] : [];
  if (pending && options.nobodyCanDecide) blocks.push(nobodyNotice(version));
  if (pending && !options.copy && !notifiesThread(approval.rule)) {
    // Announced by direct message only: the thread shows the request, the deciding happens in the copies.
    blocks.push({
      type: 'context',
      block_id: `decide-elsewhere-${version}`,
      elements: [{ type: 'mrkdwn', text: ':envelope: Sent by direct message to the people who may decide.' }],
    });
    if (more.length > 0) blocks.push({ type: 'actions', block_id: `more-${version}`, elements: more });
  } else if (pending) {
    blocks.push({
      type: 'actions',
      block_id: `decide-${version}`,
      elements: [...decisionButtons(approval), ...more],
    });
  } else {
    blocks.push({
      type: 'context',
      block_id: `outcome-${version}`,
      elements: [{ type: 'mrkdwn', text: outcomeText(approval, options.standing ?? false, name) }],
    });
    blocks.push(...breakGlassCardLine(approval, `break-glass-${version}`));
    if (approval.editedArguments && approval.originApprovalId === null && approved(approval)) {
      // What the person changed, field by field, then the arguments that ran.
      blocks.push(...changesBlocks(approval, `changes-${version}`));
      const edited = redactedArguments(approval.editedArguments, 2);
      blocks.push(
        preformatted(
          `edited-${version}`,
          cutWithin(edited, EDITED_BUDGET, `\n… (truncated; ${edited.length} characters in all)`),
        ),
      );
    }
    if (more.length) blocks.push({ type: 'actions', block_id: `more-${version}`, elements: more });
  }
  return { text: fallbackText(approval), blocks };
}

/** Said on a pending card nobody can decide, so that nobody waits for a decision that cannot come. */
export const NOBODY_CAN_DECIDE =
  ':warning: *Nobody can decide this request yet*: only admins may, and the bot has none (`ADMIN_USER_IDS` is empty). ' +
  "An operator can add admins' Slack user IDs to `ADMIN_USER_IDS` and restart the bot; the request waits until then.";

function nobodyNotice(version: string): KnownBlock {
  return {
    type: 'context',
    block_id: `nobody-${version}`,
    elements: [{ type: 'mrkdwn', text: NOBODY_CAN_DECIDE }],
  };
}

/**
 * Approve, Approve for this thread (when the rule allows standing approvals), Edit, Reject. Standing approvals
 * and edits are one person's decision, so a request that needs several approvals offers neither.
 */
export function decisionButtons(approval: ApprovalRecord): Button[] {
  const value = encodeApprovalButtonValue(approval.id);
  const button = (actionId: string, text: string, style?: 'primary' | 'danger'): Button => ({
    type: 'button',
    action_id: actionId,
    text: { type: 'plain_text', text },
    ...(style ? { style } : {}),
    value,
  });
  const offered = decisionOptions(approval.rule);
  return [
    button(ACTION_IDS.approve, 'Approve', 'primary'),
    ...(offered.standing ? [button(ACTION_IDS.approveThread, 'Approve for this thread')] : []),
    ...(offered.edit ? [button(ACTION_IDS.edit, 'Edit')] : []),
    button(ACTION_IDS.reject, 'Reject', 'danger'),
  ];
}

/** "View all arguments": opens a modal with every character of the arguments (secrets masked). */
export function viewAllButton(approval: ApprovalRecord): Button {
  return {
    type: 'button',
    action_id: ACTION_IDS.viewArguments,
    text: { type: 'plain_text', text: 'View all arguments' },
    value: encodeApprovalButtonValue(approval.id),
  };
}

function approved(approval: ApprovalRecord): boolean {
  return approval.status === 'approved' || approval.status === 'executing' || approval.status === 'executed';
}

/** Whether the card shows only part of the arguments. */
function argumentsCut(approval: ApprovalRecord): boolean {
  return shownArguments(approval.arguments).length > ARGUMENTS_BUDGET;
}

/**
 * The arguments as the card shows them, shown literally in a preformatted block (no markup can escape it),
 * with the values of secret-looking keys and credential-looking strings masked as in the audit log. Cut
 * visibly when long; the card then offers "View all arguments".
 */
function argumentsText(approval: ApprovalRecord): string {
  const shown = shownArguments(approval.arguments);
  return cutWithin(
    shown,
    ARGUMENTS_BUDGET,
    `\n… (truncated; ${shown.length} characters in all: View all arguments shows everything)`,
  );
}

/** Pretty JSON with secrets masked; raw text (masked) when the model sent no valid JSON. */
export function shownArguments(raw: string): string {
  if (raw === '') return '(no arguments)';
  try {
    JSON.parse(raw);
    return redactedArguments(raw, 2);
  } catch {
    return `${redactedArguments(raw)}\n(not valid JSON)`;
  }
}

function detailsText(
  approval: ApprovalRecord,
  approvers: readonly string[],
  name: (id: string) => string,
): string {
  const rule = approval.rule;
  const parts = [`Requested by <@${approval.requesterId}>`, `Approvers: ${describeApprovers(rule)}`];
  parts.push(...ruleProgress(approval, approvers, name));
  if (rule.escalatedAt !== undefined && rule.escalateTo)
    parts.push(`escalated to ${describeApprovers({ approvers: rule.escalateTo })}`);
  const applied = appliedRuleText(approval);
  if (applied) parts.push(applied);
  parts.push(`ID \`${approval.id}\``);
  return parts.join(' · ');
}

/**
 * Which of the tool's conditional rules applied: "Rule: tools.post_message.rules[1] (size(args.text) > 1000)",
 * or, when its condition could not be evaluated, that approval is required because of it.
 */
export function appliedRuleText(approval: Pick<ApprovalRecord, 'rule'>): string | undefined {
  const applied = approval.rule.appliedRule;
  if (!applied) return undefined;
  const when = escapeMrkdwn(truncateVisibly(applied.when, 300)).replace(/`/g, "'");
  const rule = `Rule: \`${applied.place}\` (\`${when}\`)`;
  if (applied.error === undefined) return rule;
  const error = safeMrkdwn(truncateVisibly(applied.error, 200));
  return `${rule} could not be evaluated (${error}), so approval is required`;
}

/** "2 approvals needed" / "1 of 2 approvals: <@a>", and "expires in 24h (date)" while pending. */
function ruleProgress(
  approval: ApprovalRecord,
  approvers: readonly string[],
  name: (id: string) => string,
): string[] {
  const { rule } = approval;
  const parts: string[] = [];
  if (rule.quorum > 1) {
    const who = approvers.map(name).join(', ');
    parts.push(
      approvers.length === 0
        ? `${rule.quorum} approvals needed`
        : `${approvers.length} of ${rule.quorum} approvals: ${who}`,
    );
  }
  if (rule.expiresAfterMs && approval.expiresAt && approval.status === 'pending') {
    parts.push(`expires in ${formatDuration(rule.expiresAfterMs)} (${slackDate(approval.expiresAt)})`);
  }
  return parts;
}

function outcomeText(approval: ApprovalRecord, standing: boolean, name: (id: string) => string): string {
  const when = approval.decidedAt ? ` · ${slackDate(approval.decidedAt)}` : '';
  const by = (approval.decidedBy ?? '').split(',').filter(Boolean).map(name).join(', ');
  switch (approval.status) {
    case 'approved':
    case 'executing':
    case 'executed': {
      if (approval.originApprovalId)
        return `:white_check_mark: Auto-approved (approved for this thread by ${by || 'someone'})${when}`;
      const scope = standing ? ' for this thread' : '';
      const edited = approval.editedArguments
        ? ' with edited arguments (changes, then all of them, below)'
        : '';
      return `:white_check_mark: Approved${scope} by ${by || 'someone'}${when}${edited}`;
    }
    case 'rejected': {
      const reason = approval.reason
        ? `: “${safeMrkdwn(truncateVisibly(redactText(approval.reason), 500))}”`
        : '';
      return `:x: Rejected by ${by || 'someone'}${when}${reason}`;
    }
    case 'expired':
      return `:hourglass: Expired${approval.rule.expiresAfterMs ? ` after ${formatDuration(approval.rule.expiresAfterMs)}` : ''}, no decision`;
    case 'cancelled':
      return `:no_entry_sign: Cancelled: ${safeMrkdwn(truncateVisibly(redactText(approval.reason ?? 'no reason given'), 500))}`;
    case 'pending':
      return '';
  }
}

function statusEmoji(approval: ApprovalRecord): string {
  if (approval.status === 'rejected') return ':x:';
  if (approval.status === 'expired') return ':hourglass:';
  if (approval.status === 'cancelled') return ':no_entry_sign:';
  return ':white_check_mark:';
}

function fallbackText(approval: ApprovalRecord): string {
  if (approval.status === 'pending')
    return `Approval needed: ${callChain(approval)} (requested by <@${approval.requesterId}>)`;
  return `Approval request for ${callChain(approval)}: ${approval.status}`;
}
