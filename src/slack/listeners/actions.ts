import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import { ACTION_IDS, DECISION_ACTION } from '../ids.js';
import { type ActionListenerDeps, clickOf } from './decision-replies.js';

/**
 * Approve and Approve for this thread clicks (Reject and Edit open a modal first, see decision-modals.ts).
 * Slack wants an ack within 3 seconds, so the ack comes first; the decision is taken from the button's
 * approval id and the verified clicker alone.
 */
export function registerActionListeners(app: App, deps: ActionListenerDeps): void {
  app.action<BlockAction<ButtonAction>>({ action_id: DECISION_ACTION }, async ({ ack, body, action }) => {
    await ack();
    // Decided after the ack, where the clicks go (a worker, or this thread once the requests already waiting
    // were read and acked): under a burst of clicks every ack leaves at once.
    deps.clicks.click(clickOf(body, action, action.action_id === ACTION_IDS.approveThread));
  });
}
