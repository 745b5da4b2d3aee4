import { type ClickedCard, cardFallback } from '../../approvals/approval.js';
import type { DecisionResult } from '../../approvals/approval-service.js';
import type { RunWork } from '../../conversations/run-work.js';
import { ALREADY_VOTED, alreadyDecided, UNKNOWN_BUTTON } from './refusals.js';

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
