import type { types } from '@slack/bolt';
import type { ApprovalRecord } from '../../approvals/approval.js';
import { MAX_REASON_LENGTH } from '../../approvals/approval.js';
import { encodeApprovalButtonValue } from '../button-value.js';
import { ACTION_IDS, CALLBACK_IDS, MODAL_INPUTS } from '../ids.js';
import { context } from './approval-lines.js';

export { MAX_REASON_LENGTH };

/**
 * A request's checkbox in App Home, as the section's accessory (no extra block). Its one option's value is the
 * opaque approval id, as a button's is; the ticked ones arrive in the view's state with the batch buttons' click.
 */
export function selectBox(approval: ApprovalRecord): types.Checkboxes {
  return {
    type: 'checkboxes',
    action_id: ACTION_IDS.select,
    options: [{ text: { type: 'mrkdwn', text: 'Select' }, value: encodeApprovalButtonValue(approval.id) }],
  };
}

/** What App Home shows above requests that can be selected: a hint and the two batch buttons. */
export function batchBar(): types.KnownBlock[] {
  return [
    context('batch-hint', 'Tick several requests, then approve or reject them together.'),
    {
      type: 'actions',
      block_id: 'batch-actions',
      elements: [
        {
          type: 'button',
          action_id: ACTION_IDS.batchApprove,
          style: 'primary',
          text: { type: 'plain_text', text: 'Approve selected' },
        },
        {
          type: 'button',
          action_id: ACTION_IDS.batchReject,
          style: 'danger',
          text: { type: 'plain_text', text: 'Reject selected' },
        },
      ],
    },
  ];
}

/**
 * The modal behind Reject selected: one optional reason for every selected request. `privateMetadata` carries
 * the selection (see batch-selection.ts); every request is read and checked again on submit.
 */
export function buildBatchRejectModal(privateMetadata: string, count: number): types.ModalView {
  return {
    type: 'modal',
    callback_id: CALLBACK_IDS.batchRejectModal,
    private_metadata: privateMetadata,
    title: { type: 'plain_text', text: 'Reject selected' },
    submit: { type: 'plain_text', text: `Reject ${count}` },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `Reject the ${count} selected requests? Each is rejected on its own, and each agent is told its call was not approved. Requests you may not decide are skipped, and I tell you which.`,
        },
      },
      {
        type: 'input',
        block_id: MODAL_INPUTS.reason.blockId,
        optional: true,
        label: { type: 'plain_text', text: 'Reason for all of them (optional, shown to the agents)' },
        element: {
          type: 'plain_text_input',
          action_id: MODAL_INPUTS.reason.actionId,
          multiline: true,
          max_length: MAX_REASON_LENGTH,
        },
      },
    ],
  };
}
