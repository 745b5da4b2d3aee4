import type { types } from '@slack/bolt';
import { MAX_REASON_LENGTH } from '../../approvals/approval.js';
import { CALLBACK_IDS, MODAL_INPUTS } from '../ids.js';

/** Longest rejection reason a person can type (the same in the terminal). */
export { MAX_REASON_LENGTH };

/** Slack's limit for a plain_text_input's initial value and max_length. */
export const MAX_INPUT_LENGTH = 3000;

/** The modal behind Reject: an optional reason. Everything about the request is read again on submit. */
export function buildRejectModal(privateMetadata: string, toolName: string): types.ModalView {
  return {
    type: 'modal',
    callback_id: CALLBACK_IDS.rejectModal,
    private_metadata: privateMetadata,
    title: { type: 'plain_text', text: 'Reject request' },
    submit: { type: 'plain_text', text: 'Reject' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `Reject the call to \`${toolName}\`? The agent is told it was not approved.`,
        },
      },
      {
        type: 'input',
        block_id: MODAL_INPUTS.reason.blockId,
        optional: true,
        label: { type: 'plain_text', text: 'Reason (optional, shown to the agent)' },
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

/**
 * The modal behind Edit: the call's arguments as JSON, validated against the tool's schema on submit. `json`
 * must fit the input (`MAX_INPUT_LENGTH`): the form is never opened with arguments cut short.
 */
export function buildEditModal(privateMetadata: string, toolName: string, json: string): types.ModalView {
  return {
    type: 'modal',
    callback_id: CALLBACK_IDS.editModal,
    private_metadata: privateMetadata,
    title: { type: 'plain_text', text: 'Edit, then approve' },
    submit: { type: 'plain_text', text: 'Approve edited' },
    close: { type: 'plain_text', text: 'Cancel' },
    blocks: [
      {
        type: 'section',
        text: {
          type: 'mrkdwn',
          text: `Change the arguments of \`${toolName}\`, then approve. The edited arguments run, and the agent is told they were edited.`,
        },
      },
      {
        type: 'input',
        block_id: MODAL_INPUTS.arguments.blockId,
        label: { type: 'plain_text', text: 'Arguments (JSON)' },
        element: {
          type: 'plain_text_input',
          action_id: MODAL_INPUTS.arguments.actionId,
          multiline: true,
          max_length: MAX_INPUT_LENGTH,
          initial_value: json,
        },
      },
    ],
  };
}
