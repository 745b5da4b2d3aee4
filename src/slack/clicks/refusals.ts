import type { ApprovalRecord } from '../../approvals/approval.js';
import type { EditResult } from '../../approvals/argument-edit-service.js';
import { slackDate } from '../mrkdwn.js';

/** The answer to a button whose approval id is forged, unknown or not the clicker's to see. */
export const UNKNOWN_BUTTON =
  'This button does not belong to an approval request I know of, so nothing happened.';

/**
 * The answer to a click whose decision the database refused: the click is kept and decided once it can be, so
 * the person must not be told that nothing changed (the call would then run after all).
 */
export const DECISION_DELAYED =
  'I could not record your decision yet because of a problem on my side; I will record it as soon as I can, and the card will show it.';

/** The answer to a second vote by the same person on a request that needs several approvers. */
export const ALREADY_VOTED = 'You have already voted on this request; it needs approvals from other people.';

/** Why a click on a request no longer pending changed nothing: who decided it and when, or how it ended. */
export function alreadyDecided(approval: ApprovalRecord): string {
  const by = (approval.decidedBy ?? '')
    .split(',')
    .filter(Boolean)
    .map((id) => `<@${id}>`)
    .join(', ');
  const when = approval.decidedAt ? ` ${slackDate(approval.decidedAt)}` : '';
  switch (approval.status) {
    case 'expired':
      return 'This request expired before anyone decided it.';
    case 'cancelled':
      return `This request was cancelled: ${approval.reason ?? 'no reason given'}.`;
    case 'rejected':
      return `This request was already rejected by ${by || 'someone'}${when}.`;
    default:
      return `This request was already approved by ${by || 'someone'}${when}.`;
  }
}

/** The sentence a form shows when a decision or an edit was refused (beside the field it concerns). */
export function refusalText(result: Extract<EditResult, { ok: false }>): string {
  switch (result.kind) {
    case 'invalid':
    case 'not_allowed':
      return result.message;
    case 'not_found':
      return UNKNOWN_BUTTON;
    case 'already_voted':
      return ALREADY_VOTED;
    case 'already_decided':
      return alreadyDecided(result.approval);
  }
}
