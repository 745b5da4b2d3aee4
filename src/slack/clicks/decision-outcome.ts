import type { ApprovalRecord } from '../../approvals/approval.js';
import type { DecisionResult } from '../../approvals/approval-service.js';
import type { RunWork } from '../../conversations/run-work.js';
import type { CardLocation } from '../../conversations/surface-ports.js';
import { ALREADY_VOTED, alreadyDecided, UNKNOWN_BUTTON } from './refusals.js';

/** The card a click or a form came from, as the payload names it (never trusted over what is stored). */
export interface ClickedCard {
  channelId: string | undefined;
  messageTs: string | undefined;
  threadTs: string | undefined;
}

/**
 * Where to update the card besides the stored location: nowhere when the card's location is stored (a payload
 * naming another message could otherwise overwrite someone else's card); else the clicked message, and only
 * when it is in the approval's own channel and thread (a card posted just before a crash, never recorded).
 */
function cardFallback(approval: ApprovalRecord, clicked: ClickedCard | undefined): CardLocation | undefined {
  if (!clicked || approval.messageTs) return undefined;
  const { channelId, messageTs, threadTs } = clicked;
  if (!channelId || !messageTs) return undefined;
  return channelId === approval.channelId && threadTs === approval.threadTs
    ? { channelId, messageTs }
    : undefined;
}

/**
 * Tells the person why nothing changed, or hands what changed to the work that follows (cards, run, App Home):
 * the same for a click and for a submitted form.
 */
export async function applyResult(
  work: Pick<RunWork, 'settled'>,
  result: DecisionResult,
  clicked: ClickedCard | undefined,
  tell: (text: string) => Promise<void>,
  standing = false,
): Promise<void> {
  const fallback = result.ok ? cardFallback(result.approval, clicked) : undefined;
  const where = fallback ? { fallback } : {};
  switch (result.kind) {
    case 'not_found':
      return tell(UNKNOWN_BUTTON);
    case 'not_allowed':
      // Past the per-person limit of refusals: no reply either.
      return result.quiet ? undefined : tell(result.message);
    case 'already_voted':
      return tell(ALREADY_VOTED);
    case 'already_decided':
      return tell(alreadyDecided(result.approval));
    case 'counted':
      work.settled({ kind: 'counted', approval: result.approval, approvers: result.approvers }, where);
      return;
    case 'decided':
      work.settled(
        { kind: 'decided', approval: result.approval, runClaimed: result.runClaimed, standing },
        where,
      );
  }
}
