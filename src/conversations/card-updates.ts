import type { ApprovalRecord } from '../approvals/approval.js';
import type { Clock } from '../clock.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { isNotInstalled, nextAttemptAt } from './delivery.js';
import type { OwedCardUpdates } from './store-ports.js';
import type { CardUpdate, CardUpdater } from './surface-ports.js';

export interface CardUpdatesDeps {
  surface: CardUpdater;
  outbox: Pick<OwedCardUpdates, 'oweCardUpdate'>;
  clock: Clock;
  logger: Logger;
  /** The delivery retry interval: a refused update is tried again after 1, 2, 4 … of them (or Slack's wait). */
  retryMs: number;
}

/**
 * Shows a change to a request on every copy of its card. An update Slack refuses (rate limit, outage) is owed
 * in the delivery outbox and sent again, rendered from the state stored then, until it lands: a card never
 * keeps offering buttons for a request that was decided, expired or cancelled. Never throws: the change itself
 * is committed, and the run goes on whatever the card shows.
 */
export async function updateCard(
  deps: CardUpdatesDeps,
  approval: ApprovalRecord,
  update: CardUpdate = {},
): Promise<void> {
  try {
    await deps.surface.updateApprovalCard(approval, update);
  } catch (error) {
    // The app was removed from the card's workspace: no update will ever land there.
    if (isNotInstalled(error)) {
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
