import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { AcceptedRequest } from '../../approvals/click-inbox.js';
import { describeError } from '../../errors.js';
import { randomId } from '../../ids.js';
import type { Logger } from '../../logger.js';
import { type ClickWork, clickOf } from '../clicks/click.js';
import { ACTION_IDS, DECISION_ACTION } from '../ids.js';

export interface ClickListenerDeps {
  /** Records a click before its ack (see `RequestLedger.accept`); rejects when it cannot. */
  accept: (request: AcceptedRequest) => Promise<boolean>;
  /** Where an Approve click is decided after its ack (this thread, or a worker). */
  clicks: ClickWork;
  logger: Logger;
}

/**
 * Approve and Approve for this thread clicks (Reject and Edit open a modal first, see decision-modals.ts), as
 * Bolt delivers them (Socket Mode; over HTTP the request guard takes them first). Slack wants an ack within 3
 * seconds and never delivers a click again once acked, so the click is recorded first (lost with its process
 * otherwise), then acked; one that cannot be recorded is not acked, and Slack tells the person it failed. The
 * decision is taken from the button's approval id and the verified clicker alone (see clicks/decide-click.ts).
 */
export function registerActionListeners(app: App, deps: ClickListenerDeps): void {
  app.action<BlockAction<ButtonAction>>({ action_id: DECISION_ACTION }, async ({ ack, body, action }) => {
    const click = clickOf(body, action, action.action_id === ACTION_IDS.approveThread);
    // No signature to key it by: the socket is authenticated, and nothing can be replayed into it.
    const key = randomId('click');
    try {
      await deps.accept({ key, click });
    } catch (error) {
      deps.logger.error('click could not be recorded; not acknowledged', { error: describeError(error) });
      return;
    }
    await ack();
    // Decided after the ack, where the clicks go (a worker, or this thread once the requests already waiting
    // were read and acked): under a burst of clicks every ack leaves at once.
    deps.clicks.click(click, key);
  });
}
