import type { ApprovalRecord } from '../approvals/approval.js';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isNotInstalled, nextAttemptAt } from './delivery.js';
import type { LandedCardUpdates } from './landed-card-updates.js';
import type { OwedCardUpdates } from './store-ports.js';
import type { CardUpdate, CardUpdater } from './surface-ports.js';

export interface CardUpdatesDeps {
  surface: CardUpdater;
  outbox: Pick<OwedCardUpdates, 'oweCardUpdate' | 'owedCardUpdate'>;
  /** Where an update that landed (or never will: the app was removed) is said to be owed no more. */
  landed: Pick<LandedCardUpdates, 'landed'>;
  clock: Clock;
  logger: Logger;
  /** The delivery retry interval: a refused update is tried again after 1, 2, 4 … of them (or Slack's wait). */
  retryMs: number;
}

/**
 * Shows a change to a request on every copy of its card. The update is owed in the delivery outbox from the
 * change's own transaction, leased to this process; once it lands it is owed no more. One Slack refuses (rate
 * limit, outage) is given back to be sent again, by any process, rendered from the state stored then, until it
 * lands; one this process never got to send (it died) is sent by another when the lease runs out. So a card
 * never keeps offering buttons for a request that was decided, expired or cancelled. Never throws: the change
 * itself is committed, and the run goes on whatever the card shows.
 */
export async function updateCard(
  deps: CardUpdatesDeps,
  approval: ApprovalRecord,
  update: CardUpdate = {},
): Promise<void> {
  // Read before rendering: what the card shows is at least the change owed then, so that one may be written off.
  const owedAt = await deps.outbox.owedCardUpdate(approval.id).catch(() => undefined);
  const shown = () => {
    if (owedAt !== undefined) deps.landed.landed(approval.id, owedAt);
  };
  try {
    await deps.surface.updateApprovalCard(approval, update);
    shown();
  } catch (error) {
    // The app was removed from the card's workspace: no update will ever land there.
    if (isNotInstalled(error)) {
      shown();
      deps.logger.warn('approval card not updated: the app was removed from its workspace', {
        approvalId: approval.id,
        teamId: approval.teamId,
      });
      return;
    }
    deps.logger.warn('approval card update failed; it will be retried', {
      approvalId: approval.id,
      error: describeError(error),
    });
    try {
      const dueAt = nextAttemptAt(deps.clock.now(), 1, deps.retryMs, error);
      await deps.outbox.oweCardUpdate(approval, { dueAt, attempts: 1, update });
    } catch (owing) {
      deps.logger.error('an approval card update could not be owed; the card shows an older state', {
        approvalId: approval.id,
        error: describeError(owing),
      });
    }
  }
}
