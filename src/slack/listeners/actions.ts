import type { App, BlockAction, ButtonAction } from '@slack/bolt';
import type { ApprovalRecord } from '../../approvals/approval.js';
import type { ApprovalService, DecisionResult } from '../../approvals/approval-service.js';
import type { ConversationService } from '../../conversations/conversation-service.js';
import { describeError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import { decodeApprovalButtonValue } from '../button-value.js';
import { ACTION_IDS, DECISION_ACTION } from '../ids.js';
import { slackDate } from '../mrkdwn.js';
import type { CardLocation, SlackSurface } from '../slack-surface.js';

export interface ActionListenerDeps {
  approvals: ApprovalService;
  conversations: ConversationService;
  surface: SlackSurface;
  logger: Logger;
  /** Called after a vote was counted or settled a request (e.g. to refresh App Home views). Must not throw. */
  afterDecision?: (approval: ApprovalRecord, deciderId: string) => Promise<void>;
}

const UNKNOWN_BUTTON = 'This button does not belong to an approval request I know of, so nothing happened.';

/**
 * Approve and Reject clicks. Slack wants an ack within 3 seconds, so the ack comes first; the decision is
 * taken from the button's approval id and the verified clicker alone.
 */
export function registerActionListeners(app: App, deps: ActionListenerDeps): void {
  app.action<BlockAction<ButtonAction>>(
    { action_id: DECISION_ACTION },
    async ({ ack, body, action, client }) => {
      await ack();
      const channelId = body.channel?.id ?? body.container?.channel_id;
      const messageTs = body.message?.ts ?? body.container?.message_ts;
      const threadTs = body.message?.thread_ts ?? body.container?.thread_ts;
      // A click in App Home has no channel (its container is the view): answer in the app's DM instead.
      const tell = (text: string) =>
        (channelId
          ? deps.surface.postEphemeral(channelId, body.user.id, text, threadTs)
          : client.chat.postMessage({ channel: body.user.id, text }).then(() => undefined)
        ).catch((error: unknown) => {
          deps.logger.warn('reply to a click failed', { channelId, error: describeError(error) });
        });
      const decoded = decodeApprovalButtonValue(action.value);
      const teamId = body.team?.id ?? body.user.team_id;
      if (!decoded.ok || !teamId) {
        await tell(UNKNOWN_BUTTON);
        return;
      }
      const result = await deps.approvals.decide({
        approvalId: decoded.approvalId,
        userId: body.user.id,
        teamId,
        channelId,
        vote: action.action_id === ACTION_IDS.approve ? 'approve' : 'reject',
        reason: null,
      });
      const fallback = channelId && messageTs ? { channelId, messageTs } : undefined;
      await applyResult(deps, result, fallback, tell);
      if (result.kind === 'decided' || result.kind === 'counted')
        await deps.afterDecision?.(result.approval, body.user.id);
    },
  );
}

async function applyResult(
  deps: ActionListenerDeps,
  result: DecisionResult,
  fallback: CardLocation | undefined,
  tell: (text: string) => Promise<void>,
): Promise<void> {
  switch (result.kind) {
    case 'not_found':
      return tell(UNKNOWN_BUTTON);
    case 'not_allowed':
      return tell(result.message);
    case 'already_voted':
      return tell('You have already voted on this request; it needs approvals from other people.');
    case 'already_decided':
      return tell(alreadyDecided(result.approval));
    case 'counted':
      await updateCard(deps, result.approval, fallback, result.approvers);
      return;
    case 'decided':
      await updateCard(deps, result.approval, fallback);
      if (result.runClaimed) {
        deps.conversations.resume(result.approval.runId, result.approval).catch((error: unknown) => {
          deps.logger.error('resume failed', { runId: result.approval.runId, error: describeError(error) });
        });
      }
  }
}

async function updateCard(
  deps: ActionListenerDeps,
  approval: ApprovalRecord,
  fallback: CardLocation | undefined,
  approvers?: readonly string[],
): Promise<void> {
  try {
    await deps.surface.updateCard(approval, {
      ...(fallback ? { fallback } : {}),
      ...(approvers ? { approvers } : {}),
    });
  } catch (error) {
    // The decision is committed; a card that failed to update is cosmetic and the run goes on.
    deps.logger.warn('approval card update failed', { approvalId: approval.id, error: describeError(error) });
  }
}

function alreadyDecided(approval: ApprovalRecord): string {
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
