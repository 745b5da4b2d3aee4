import type { webApi } from '@slack/bolt';
import type { ApprovalRecord, ApprovalRule } from '../approvals/approval.js';
import type { ApprovalTimerEvents } from '../approvals/approval-scheduler.js';
import type { ConversationService } from '../conversations/conversation-service.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { escapeMrkdwn } from './mrkdwn.js';
import type { SlackSurface } from './slack-surface.js';

export interface ApprovalNotifierDeps {
  client: webApi.WebClient;
  surface: SlackSurface;
  conversations: ConversationService;
  adminUserIds: readonly string[];
  logger: Logger;
  /** Called after a request expired (e.g. to refresh App Home views). Must not throw. */
  afterExpiry?: (approval: ApprovalRecord) => Promise<void>;
}

/** Acts on passed deadlines in Slack: expired cards are updated and their runs resumed; reminders are posted. */
export function createApprovalNotifier(deps: ApprovalNotifierDeps): ApprovalTimerEvents {
  const { logger } = deps;
  return {
    async expired(approval, runClaimed) {
      await deps.surface.updateCard(approval).catch((error: unknown) => {
        logger.warn('expired card update failed', { approvalId: approval.id, error: describeError(error) });
      });
      await deps.afterExpiry?.(approval);
      if (!runClaimed) return;
      // Like after a click: the run continues in the background, serialised with the conversation's work.
      deps.conversations.resume(approval.runId, approval).catch((error: unknown) => {
        logger.error('resume after expiry failed', { runId: approval.runId, error: describeError(error) });
      });
    },
    async remind(approval) {
      await deps.client.chat.postMessage({
        channel: approval.channelId,
        thread_ts: approval.threadTs,
        text: reminderText(approval, deps.adminUserIds),
      });
    },
  };
}

/** The thread reminder: which request waits, and a mention of everyone who may decide it. */
export function reminderText(
  approval: Pick<ApprovalRecord, 'id' | 'toolName' | 'rule' | 'requesterId'>,
  adminUserIds: readonly string[],
): string {
  const who = mentionDeciders(approval.rule, approval.requesterId, adminUserIds);
  return `:bell: Reminder: the request to run \`${escapeMrkdwn(approval.toolName)}\` (ID \`${approval.id}\`) is still waiting for a decision. It can be decided by ${who}.`;
}

function mentionDeciders(rule: ApprovalRule, requesterId: string, adminUserIds: readonly string[]): string {
  const mentions = new Set<string>();
  const mayDecide = (userId: string) => rule.allowSelfApproval || userId !== requesterId;
  for (const approver of rule.approvers) {
    if (approver === 'admins') {
      const admins = adminUserIds.filter(mayDecide);
      if (admins.length === 0) mentions.add('admins');
      for (const admin of admins) mentions.add(`<@${admin}>`);
    } else if (approver === 'conversation') mentions.add('anyone in this conversation');
    else if (approver === 'requester') {
      if (rule.allowSelfApproval) mentions.add(`<@${requesterId}>`);
    } else if (approver.startsWith('S')) mentions.add(`<!subteam^${approver}>`);
    else if (mayDecide(approver)) mentions.add(`<@${approver}>`);
  }
  return [...mentions].join(', ') || 'nobody';
}
