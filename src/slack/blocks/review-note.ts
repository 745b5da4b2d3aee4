import type { types } from '@slack/bolt';
import type { ApprovalReview } from '../../approvals/approval-review.js';
import { redactText } from '../../redact.js';
import { escapeMrkdwn } from '../mrkdwn.js';

/** Says who wrote the note, so nobody reads a model's summary as the bot's or a person's word. */
export const REVIEWER_LABEL = ':robot_face: *Reviewer (model):*';

/**
 * The reviewer's note on a card: its summary and each flag, labelled as written by a model. Everything the
 * model wrote is escaped (no mention, no link it could forge) and already cut short when it was read. Pure.
 *
 * @example
 * reviewNoteBlocks({ summary: 'Deletes note 12', flags: [], structured: true }, 'review-pending-0');
 */
export function reviewNoteBlocks(review: ApprovalReview | undefined, blockId: string): types.KnownBlock[] {
  if (!review) return [];
  const text = (line: string) => escapeMrkdwn(redactText(line));
  const summary = review.summary === '' ? '_(no summary)_' : text(review.summary);
  const flags =
    review.flags.length === 0
      ? [review.structured ? 'Flags: none.' : 'Its answer was not in the form asked for: no flags read.']
      : review.flags.map((flag) => `:warning: *Flag:* ${text(flag)}`);
  return [
    {
      type: 'context',
      block_id: blockId,
      elements: [{ type: 'mrkdwn', text: [`${REVIEWER_LABEL} ${summary}`, ...flags].join('\n') }],
    },
  ];
}
