import type { types } from '@slack/bolt';
import type { ApprovalDetail } from '../../approvals/audit-queries.js';
import { describeApprovers } from '../../approvals/policy.js';
import { redactText } from '../../audit/redact.js';
import { escapeMrkdwn, safeMrkdwn, slackDate, truncateVisibly } from '../mrkdwn.js';
import { appliedRuleText, type SlackMessage } from './approval-card.js';
import { context, escapedWithin, header, mentions, redactedArguments } from './approval-lines.js';

type KnownBlock = types.KnownBlock;

/** Room for text inside one section (3,000 characters) with the code fence and the note. */
const SECTION_BUDGET = 2600;
/** Audit events listed before "and N more"; the full trail is in `npm run audit -- list`. */
const MAX_EVENTS = 25;

/** `/approvals show ID`: the arguments in full (secrets redacted), the rule, every vote, the outcome, the trail. */
export function buildApprovalDetail({ approval, votes, events }: ApprovalDetail): SlackMessage {
  const args = redactedArguments(approval.editedArguments ?? approval.arguments, 2);
  const cut = `\n… (truncated; ${args.length} characters in all: npm run audit -- list --format jsonl)`;
  const facts = [
    `*Status:* ${approval.status}`,
    `*Requested by* <@${approval.requesterId}> ${slackDate(approval.createdAt)} in <#${approval.channelId}>`,
    `*Who may decide:* ${describeApprovers(approval.rule)}${approval.rule.quorum > 1 ? ` (${approval.rule.quorum} approvals needed)` : ''}`,
  ];
  const applied = appliedRuleText(approval);
  if (applied) facts.push(applied.replace(/^Rule:/, '*Rule:*'));
  if (approval.decidedAt) {
    facts.push(`*Decided by* ${mentions(approval.decidedBy) || 'nobody'} ${slackDate(approval.decidedAt)}`);
  }
  if (approval.reason) facts.push(`*Reason:* ${safeMrkdwn(truncateVisibly(approval.reason, 500))}`);
  const voteLines = votes.map(
    (vote) =>
      `${vote.vote === 'approve' ? ':white_check_mark:' : ':x:'} <@${vote.userId}> ${vote.vote}d ${slackDate(vote.at)}`,
  );
  const blocks: KnownBlock[] = [
    header('title', `${approval.toolName} · ${approval.id}`),
    { type: 'section', block_id: 'facts', text: { type: 'mrkdwn', text: facts.join('\n') } },
    {
      type: 'section',
      block_id: 'arguments',
      text: {
        type: 'mrkdwn',
        text: `*Arguments${approval.editedArguments ? ' (as edited)' : ''}:*\n\`\`\`${escapedWithin(args, SECTION_BUDGET, cut)}\`\`\``,
      },
    },
    {
      type: 'section',
      block_id: 'votes',
      text: { type: 'mrkdwn', text: `*Votes:*\n${voteLines.join('\n') || 'none'}` },
    },
  ];
  if (approval.result !== null) {
    const result = escapedWithin(redactText(approval.result), 1500, '…');
    blocks.push({
      type: 'section',
      block_id: 'result',
      text: { type: 'mrkdwn', text: `*Result:*\n\`\`\`${result}\`\`\`` },
    });
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
  return { text: `Approval ${approval.id}: ${approval.toolName}, ${approval.status}`, blocks };
}
