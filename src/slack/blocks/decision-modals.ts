import type { types } from '@slack/bolt';
import { z } from 'zod';
import { MAX_REASON_LENGTH } from '../../approvals/approval.js';
import { decodeApprovalButtonValue, encodeApprovalButtonValue } from '../button-value.js';
import { CALLBACK_IDS, MODAL_INPUTS } from '../ids.js';
import { truncateVisibly } from '../mrkdwn.js';

/** Longest rejection reason a person can type (the same in the terminal). */
export { MAX_REASON_LENGTH };

/** Slack's limit for a plain_text_input's initial value and max_length. */
const MAX_INPUT_LENGTH = 3000;

/**
 * What a decision modal carries in `private_metadata`: the approval id and the channel the card was clicked
 * in (the policy's "anyone in the conversation" depends on it; a submission itself comes from no channel).
 * Slack returns it as we set it, inside a signed request; it is still parsed like any outside value.
 */
export interface ModalMetadata {
  approvalId: string;
  channelId: string | undefined;
  /** The clicked card's ts: where to update it when its ts was never stored (a crash right after posting). */
  messageTs?: string | undefined;
}

const metadataSchema = z.object({
  a: z.string(),
  c: z.string().max(40).optional(),
  m: z
    .string()
    .regex(/^\d{1,12}\.\d{1,8}$/)
    .optional(),
});

export function encodeModalMetadata(metadata: ModalMetadata): string {
  const approvalId = encodeApprovalButtonValue(metadata.approvalId);
  return JSON.stringify({
    a: approvalId,
    ...(metadata.channelId ? { c: metadata.channelId } : {}),
    ...(metadata.messageTs ? { m: metadata.messageTs } : {}),
  });
}

export function decodeModalMetadata(value: string): ModalMetadata | undefined {
  let json: unknown;
  try {
    json = JSON.parse(value);
  } catch {
    return undefined;
  }
  const parsed = metadataSchema.safeParse(json);
  const id = parsed.success ? decodeApprovalButtonValue(parsed.data.a) : { ok: false as const };
  return parsed.success && id.ok
    ? { approvalId: id.approvalId, channelId: parsed.data.c, messageTs: parsed.data.m }
    : undefined;
}

/** The modal behind Reject: an optional reason. Everything about the request is read again on submit. */
export function buildRejectModal(metadata: ModalMetadata, toolName: string): types.ModalView {
  return {
    type: 'modal',
    callback_id: CALLBACK_IDS.rejectModal,
    private_metadata: encodeModalMetadata(metadata),
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

/** The modal behind Edit: the call's arguments as JSON, validated against the tool's schema on submit. */
export function buildEditModal(metadata: ModalMetadata, toolName: string, json: string): types.ModalView {
  return {
    type: 'modal',
    callback_id: CALLBACK_IDS.editModal,
    private_metadata: encodeModalMetadata(metadata),
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
          initial_value: truncateVisibly(json, MAX_INPUT_LENGTH, ''),
        },
      },
    ],
  };
}
