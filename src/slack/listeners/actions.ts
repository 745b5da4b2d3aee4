import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { DecisionResult } from '../../approvals/approval-service.js';
import { describeError } from '../../errors.js';
import { decodeApprovalButtonValue } from '../button-value.js';
import { ACTION_IDS, DECISION_ACTION } from '../ids.js';
import { type ActionListenerDeps, applyResult, ephemeralTo, UNKNOWN_BUTTON } from './decision-replies.js';

/**
 * Approve and Approve for this thread clicks (Reject and Edit open a modal first, see decision-modals.ts).
 * Slack wants an ack within 3 seconds, so the ack comes first; the decision is taken from the button's
 * approval id and the verified clicker alone.
 */
export function registerActionListeners(app: App, deps: ActionListenerDeps): void {
  app.action<BlockAction<ButtonAction>>({ action_id: DECISION_ACTION }, async ({ ack, body, action }) => {
    await ack();
    // Let the requests already waiting be read and acked before this decision's synchronous database work:
    // under a burst of clicks every ack then leaves at once instead of queueing behind the decisions.
    await new Promise((resolve) => setImmediate(resolve));
    const channelId = body.channel?.id ?? body.container?.channel_id;
    const messageTs = body.message?.ts ?? body.container?.message_ts;
    const tell = ephemeralTo(deps, body);
    const decoded = decodeApprovalButtonValue(action.value);
    const teamId = body.team?.id ?? body.user.team_id;
    if (!decoded.ok || !teamId) {
      await tell(UNKNOWN_BUTTON);
      return;
    }
    let result: DecisionResult;
    try {
      result = await deps.approvals.decide({
        approvalId: decoded.approvalId,
        userId: body.user.id,
        teamId,
        channelId,
        vote: 'approve',
        reason: null,
        standing: action.action_id === ACTION_IDS.approveThread,
      });
    } catch (error) {
      // Nothing was recorded (the decision is one transaction): say so, so the person can click again.
      deps.logger.error('decision could not be recorded', {
        approvalId: decoded.approvalId,
        error: describeError(error),
      });
      await tell(
        'I could not record your decision because of a problem on my side; nothing changed, please click again.',
      );
      return;
    }
    const fallback = channelId && messageTs ? { channelId, messageTs } : undefined;
    await applyResult(deps, result, fallback, tell, action.action_id === ACTION_IDS.approveThread);
  });
}
