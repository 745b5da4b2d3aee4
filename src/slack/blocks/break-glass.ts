import type { types } from '@slack/bolt';
import type { ApprovalRecord } from '../../approvals/approval.js';
import { MAX_JUSTIFICATION_LENGTH, MIN_JUSTIFICATION_LENGTH } from '../../approvals/break-glass.js';
import { redactText } from '../../redact.js';
import { encodeApprovalButtonValue } from '../button-value.js';
import { ACTION_IDS, CALLBACK_IDS, MODAL_INPUTS } from '../ids.js';
import { safeMrkdwn, slackDate, truncateVisibly } from '../mrkdwn.js';
import { approvalLine } from './approval-lines.js';

type KnownBlock = types.KnownBlock;

/** The justification as mrkdwn: secrets masked, markup neutralised, quoted. */
function quoted(justification: string): string {
  return `“${safeMrkdwn(truncateVisibly(redactText(justification), MAX_JUSTIFICATION_LENGTH))}”`;
}

/** The line a decided card shows under its outcome when an admin broke glass to approve it. */
export function breakGlassCardLine(approval: ApprovalRecord, blockId: string): KnownBlock[] {
  const mark = approval.breakGlass;
  if (!mark) return [];
  const text = `:rotating_light: *Break glass*: <@${mark.by}> approved what the policy would not let them, saying ${quoted(mark.justification)}. Another admin reviews it.`;
  return [{ type: 'context', block_id: blockId, elements: [{ type: 'mrkdwn', text }] }];
}

/** App Home's "Break glass…" button, shown only to admins on requests they may break glass on. */
export function breakGlassButton(approval: ApprovalRecord): types.Button {
  return {
    type: 'button',
    action_id: ACTION_IDS.breakGlass,
    text: { type: 'plain_text', text: 'Break glass…' },
    value: encodeApprovalButtonValue(approval.id),
  };
}

/** The form behind Break glass: a required justification; everything about the request is read again on submit. */
export function buildBreakGlassModal(privateMetadata: string, approval: ApprovalRecord): types.ModalView {
  return {
    type: 'modal',
    callback_id: CALLBACK_IDS.breakGlassModal,
    private_metadata: privateMetadata,
    title: { type: 'plain_text', text: 'Break glass' },
    submit: { type: 'plain_text', text: 'Approve anyway' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `The policy would not let you approve this call to \`${approval.toolName}\`. As an admin you may approve it anyway: the card, App Home and the audit log mark it as break-glass, and another admin reviews it.`,
        },
      },
      {
        type: 'input',
        block_id: MODAL_INPUTS.justification.blockId,
        label: { type: 'plain_text', text: 'Why is this needed now?' },
        element: {
          type: 'plain_text_input',
          action_id: MODAL_INPUTS.justification.actionId,
          multiline: true,
          min_length: MIN_JUSTIFICATION_LENGTH,
          max_length: MAX_JUSTIFICATION_LENGTH,
        },
      },
    ],
  };
}

/**
 * The review card of a break-glass approval, for the approval channel or the admins: who, why, the request,
 * and Acknowledge until another admin has. Pure.
 */
export function buildBreakGlassReview(approval: ApprovalRecord): { text: string; blocks: KnownBlock[] } {
  const mark = approval.breakGlass;
  const by = mark ? `<@${mark.by}>` : 'an admin';
  const when = approval.decidedAt ? ` ${slackDate(approval.decidedAt)}` : '';
  const blocks: KnownBlock[] = [
    {
      type: 'section',
      block_id: 'break-glass-summary',
      text: {
        type: 'mrkdwn',
        text: `:rotating_light: *Break glass*: ${by} approved \`${approval.toolName}\`${when}, which the policy would not let them approve, saying ${quoted(mark?.justification ?? '')}`,
      },
    },
    {
      type: 'section',
      block_id: 'break-glass-request',
      text: { type: 'mrkdwn', text: approvalLine(approval) },
    },
  ];
  if (mark?.acknowledgedBy)
    blocks.push({
      type: 'context',
      block_id: 'break-glass-acknowledged',
      elements: [
        {
          type: 'mrkdwn',
          text: `:white_check_mark: Acknowledged by <@${mark.acknowledgedBy}>${mark.acknowledgedAt ? ` ${slackDate(mark.acknowledgedAt)}` : ''}`,
        },
      ],
    });
  else
    blocks.push({
      type: 'actions',
      block_id: 'break-glass-review',
      elements: [
        {
          type: 'button',
          action_id: ACTION_IDS.acknowledgeBreakGlass,
          text: { type: 'plain_text', text: 'Acknowledge' },
          style: 'primary',
          value: encodeApprovalButtonValue(approval.id),
        },
      ],
    });
  return { text: `Break glass: ${approval.toolName} approved by an admin the policy would refuse`, blocks };
}
