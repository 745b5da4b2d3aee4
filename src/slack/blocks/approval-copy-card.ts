import type { types } from '@slack/bolt';
import type { ApprovalRecord } from '../../approvals/approval.js';
import { buildApprovalCard, type SlackMessage } from './approval-card.js';

/**
 * The card as shown in a rule's approval channel or a decider's direct messages: the thread card plus a line pointing back at the
 * conversation, so approvers can read the context before deciding. Pure.
 */
export function buildApprovalCopyCard(
  approval: ApprovalRecord,
  approvers: readonly string[],
  link: string | null,
  delegated: Readonly<Record<string, string>> = {},
): SlackMessage {
  const card = buildApprovalCard(approval, approvers, { copy: true, delegated });
  const where = `<#${approval.channelId}>`;
  const origin: types.KnownBlock = {
    type: 'context',
    block_id: `origin-${approval.status}-${approvers.length}`,
    elements: [
      {
        type: 'mrkdwn',
        text: link
          ? `Requested in ${where} · <${link}|Open the conversation>`
          : `Requested in a thread in ${where}`,
      },
    ],
  };
  const [summary, ...rest] = card.blocks;
  return { text: card.text, blocks: summary ? [summary, origin, ...rest] : [origin] };
}
