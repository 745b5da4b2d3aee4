import type { types } from '@slack/bolt';
import { callChain } from '../../approvals/approval.js';
import type { ApprovalDetail } from '../../approvals/audit-queries.js';
import { describeApprovers } from '../../approvals/policy.js';
import { redactedArguments, redactText } from '../../redact.js';
import { escapeMrkdwn, safeMrkdwn, slackDate, truncateVisibly } from '../mrkdwn.js';
import { appliedRuleText, type SlackMessage, viewAllButton } from './approval-card.js';
import { changesBlocks, previewText, riskLabel } from './approval-judgement.js';
import { context, cutWithin, header, mentions, preformatted } from './approval-lines.js';

type KnownBlock = types.KnownBlock;

/** Characters of arguments shown; the note says how to read the rest. */
const SECTION_BUDGET = 2600;
const VOTED = { approve: 'approved', reject: 'rejected' } as const;

/** Audit events listed before "and N more"; the full trail is in `npm run audit -- list`. */
const MAX_EVENTS = 25;

/** `/approvals show ID`: the arguments in full (secrets redacted), the rule, every vote, the outcome, the trail. */
export function buildApprovalDetail({ approval, votes, events }: ApprovalDetail): SlackMessage {
  const args = redactedArguments(approval.editedArguments ?? approval.arguments, 2);
  const cut = `\n… (truncated; ${args.length} characters in all: View all arguments shows everything)`;
  const facts = [
    `*Status:* ${approval.status}`,
    `*Requested by* <@${approval.requesterId}> ${slackDate(approval.createdAt)} in <#${approval.channelId}>`,
    `*Who may decide:* ${describeApprovers(approval.rule)}${approval.rule.quorum > 1 ? ` (${approval.rule.quorum} approvals needed)` : ''}`,
  ];
  const applied = appliedRuleText(approval);
  if (applied) facts.push(applied.replace(/^Rule:/, '*Rule:*'));
  const risk = riskLabel(approval);
  if (risk) facts.push(`*Risk:* ${risk}`);
  const preview = previewText(approval);
  if (preview) facts.push(`*Effect:* ${preview}`);
  if (approval.decidedAt) {
    facts.push(`*Decided by* ${mentions(approval.decidedBy) || 'nobody'} ${slackDate(approval.decidedAt)}`);
  }
  // Redacted like everything else `show` prints: a reason can quote a token.
  if (approval.reason)
    facts.push(`*Reason:* ${safeMrkdwn(truncateVisibly(redactText(approval.reason), 500))}`);
  const voteLines = votes.map(
    (vote) =>
      `${vote.vote === 'approve' ? ':white_check_mark:' : ':x:'} <@${vote.userId}> ${VOTED[vote.vote]} ${slackDate(vote.at)}`,
  );
  const blocks: KnownBlock[] = [
    header('title', `${callChain(approval)} · ${approval.id}`),
    { type: 'section', block_id: 'facts', text: { type: 'mrkdwn', text: facts.join('\n') } },
    context('arguments-title', `*Arguments${approval.editedArguments ? ' (as edited)' : ''}:*`),
    preformatted('arguments', cutWithin(args, SECTION_BUDGET, cut)),
    ...(approval.editedArguments ? [context('changes-title', '*Changes made before approving:*')] : []),
    ...changesBlocks(approval, 'changes'),
    // Cut: every character is one click away.
    ...(args.length > SECTION_BUDGET
      ? [{ type: 'actions' as const, block_id: 'more', elements: [viewAllButton(approval)] }]
      : []),
    {
      type: 'section',
      block_id: 'votes',
      text: { type: 'mrkdwn', text: `*Votes:*\n${voteLines.join('\n') || 'none'}` },
    },
  ];
  if (approval.result !== null) {
    const result = cutWithin(redactText(approval.result), 1500, '…');
    blocks.push(
      context('result-title', resultTitle(approval.toolName, events)),
      preformatted('result', result),
    );
  }
  const trail = events
    .slice(0, MAX_EVENTS)
    .map(
      (event) =>
        `#${event.seq} ${slackDate(event.at)} \`${event.kind}\` ${/^[UW][A-Z0-9]+$/.test(event.actor) ? `<@${event.actor}>` : escapeMrkdwn(event.actor)}`,
    );
  if (events.length > MAX_EVENTS) trail.push(`… and ${events.length - MAX_EVENTS} more`);
  blocks.push(context('trail-title', '*Audit trail*'), {
    type: 'section',
    block_id: 'trail',
    text: { type: 'mrkdwn', text: trail.join('\n') || 'none' },
  });
  return { text: `Approval ${approval.id}: ${callChain(approval)}, ${approval.status}`, blocks };
}

/**
 * The result's title; for an output the model read cut (its `tool.finished` event holds it whole), where the
 * whole output is: Slack cannot show a long one, the audit export can.
 */
function resultTitle(toolName: string, events: ApprovalDetail['events']): string {
  const finished = events.find((event) => event.kind === 'tool.finished');
  const total = finished?.payload.totalChars;
  if (!finished || typeof total !== 'number') return '*Result:*';
  const where =
    typeof finished.payload.result === 'string'
      ? `is in audit event #${finished.seq}: \`npm run audit -- export --tool ${toolName} --out outputs.jsonl\``
      : 'was removed by retention';
  return `*Result* (as the model read it, cut; the whole output, ${total.toLocaleString('en-US')} characters, ${where}):`;
}
