import type { ApprovalService, DecisionResult } from '../../approvals/approval-service.js';
import type { RequestLedger } from '../../approvals/click-inbox.js';
import type { RunWork } from '../../conversations/run-work.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { decodeApprovalButtonValue } from '../button-value.js';
import type { ApprovalClick, ClickWork } from './click.js';
import type { ClickReply } from './click-reply.js';
import { applyResult } from './decision-outcome.js';
import { DECISION_DELAYED, UNKNOWN_BUTTON } from './refusals.js';

/** What deciding an Approve click needs, in whichever thread it runs. */
export interface ClickDeps {
  approvals: Pick<ApprovalService, 'decide'>;
  /** Cards, the run and App Home after a decision (in this thread, or in a worker). */
  work: Pick<RunWork, 'settled'>;
  /** Answers the person who clicked. */
  reply: ClickReply;
  logger: Logger;
  /** Where accepted clicks are kept until decided: told when one is. */
  ledger: Pick<RequestLedger, 'clickDecided'>;
}

/**
 * Decides an acknowledged Approve click from the button's approval id and the verified clicker alone, then
 * tells the person why nothing changed, or hands the change to the work that follows. `taken` is called once
 * the click is decided or refused (before any reply), so whoever handed it over can forget it; the ledger row
 * under `key` is then marked decided. A click whose decision could not be recorded keeps its row undecided, so
 * it is picked up again (see `RequestLedger.takeOverdueClicks`) and decided then: the person is told so when it
 * first fails (`pickedUp`: a click taken over, about which nothing more is said until it is decided).
 */
export async function decideClick(
  deps: ClickDeps,
  click: ApprovalClick,
  key: string,
  { taken = () => {}, pickedUp = false }: { taken?: () => void; pickedUp?: boolean } = {},
): Promise<void> {
  const tell = (text: string) => deps.reply.tell(click, text);
  const decoded = decodeApprovalButtonValue(click.value);
  if (!decoded.ok || !click.teamId) {
    taken();
    await markDecided(deps, key);
    await tell(UNKNOWN_BUTTON);
    return;
  }
  let result: DecisionResult;
  try {
    result = await deps.approvals.decide({
      approvalId: decoded.approvalId,
      userId: click.userId,
      teamId: click.teamId,
      enterpriseId: click.enterpriseId,
      channelId: click.channelId,
      clicked: click,
      vote: 'approve',
      reason: null,
      standing: click.standing,
    });
  } catch (error) {
    taken();
    // Nothing was recorded (the decision is one transaction), but the click is: it is decided once it can be.
    deps.logger.error('decision could not be recorded', {
      approvalId: decoded.approvalId,
      error: describeError(error),
    });
    if (!pickedUp) await tell(DECISION_DELAYED);
    return;
  }
  taken();
  await markDecided(deps, key);
  await applyResult(deps.work, result, click, tell, click.standing);
}

/** Marks a click's ledger row decided; a failure only means it is decided again later (a no-op: already decided). */
async function markDecided(deps: ClickDeps, key: string): Promise<void> {
  try {
    await deps.ledger.clickDecided(key);
  } catch (error) {
    deps.logger.warn('a decided click could not be marked decided', { error: describeError(error) });
  }
}

/**
 * Clicks decided in this thread, after the requests already waiting were read and acked: under a burst of
 * clicks every ack then leaves before the decisions' synchronous database work.
 */
export function localClicks(deps: ClickDeps): ClickWork {
  return {
    click: (click, key) =>
      setImmediate(() => {
        decideClick(deps, click, key).catch((error: unknown) =>
          deps.logger.error('click could not be decided', { error: describeError(error) }),
        );
      }),
  };
}
