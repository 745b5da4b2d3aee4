import { type ApprovalRecord, formatDuration } from '../approvals/approval.js';
import type { ApprovalTimerEvents } from '../approvals/approval-scheduler.js';
import { describeApprovers } from '../approvals/policy.js';
import type { AdminDirectory } from '../approvals/team-admins.js';
import { type DeciderMention, deciderMentions } from '../approvals/who-to-tell.js';
import type { DecisionFollowUp } from '../conversations/decision-follow-up.js';
import type { SlackClients } from './installations/team-clients.js';
import { escapeMrkdwn } from './mrkdwn.js';
import { NO_PREVIEWS } from './no-previews.js';

export interface ApprovalNotifierDeps {
  /** Each workspace's client: a notice goes to the request's thread with its workspace's token. */
  clients: SlackClients;
  /** What follows an expiry: the same as after a decision (cards, the run, App Home). */
  followUp: Pick<DecisionFollowUp, 'after'>;
  /** Each workspace's admins, mentioned in a reminder of a request whose rule names admins. */
  admins: AdminDirectory;
  /** Where an escalated request's cards are sent and updated. */
  cards: { postEscalation(approval: ApprovalRecord): Promise<void> };
}

/** Acts on passed deadlines in Slack: expiries go to the follow-up; reminders are posted in the thread. */
export function createApprovalNotifier(deps: ApprovalNotifierDeps): ApprovalTimerEvents {
  return {
    async expired(approval, runClaimed) {
      // Like after a click: the run continues in the background, serialised with the conversation's work.
      await deps.followUp.after({ kind: 'expired', approval, runClaimed });
    },
    async escalated(approval) {
      const to = describeApprovers({ approvers: approval.rule.escalateTo ?? [] });
      const after = formatDuration(approval.rule.escalateAfterMs ?? 0);
      await deps.clients.forTeam(approval.teamId, approval.enterpriseId).chat.postMessage({
        channel: approval.channelId,
        thread_ts: approval.threadTs,
        text: `:rotating_light: The request to run \`${escapeMrkdwn(approval.toolName)}\` (ID \`${approval.id}\`) waited ${after} and was escalated to ${to}, who may now decide it too.`,
        ...NO_PREVIEWS,
      });
      await deps.cards.postEscalation(approval);
    },
    async remind(approval) {
      await deps.clients.forTeam(approval.teamId, approval.enterpriseId).chat.postMessage({
        channel: approval.channelId,
        thread_ts: approval.threadTs,
        text: reminderText(approval, await deps.admins.adminsOf(approval.teamId, approval.enterpriseId)),
        ...NO_PREVIEWS,
      });
    },
  };
}

/** The thread reminder: which request waits, and a mention of everyone who may decide it. */
export function reminderText(
  approval: Pick<ApprovalRecord, 'id' | 'toolName' | 'rule' | 'requesterId'>,
  adminUserIds: readonly string[],
): string {
  // Once escalated, those it was escalated to are mentioned too.
  const mentions = deciderMentions(approval.rule, approval.requesterId, adminUserIds).map(mentionText);
  const who = mentions.join(', ') || 'nobody';
  return `:bell: Reminder: the request to run \`${escapeMrkdwn(approval.toolName)}\` (ID \`${approval.id}\`) is still waiting for a decision. It can be decided by ${who}.`;
}

function mentionText(mention: DeciderMention): string {
  switch (mention.kind) {
    case 'user':
      return `<@${mention.userId}>`;
    case 'group':
      return `<!subteam^${mention.groupId}>`;
    case 'conversation':
      return 'anyone in this conversation';
    case 'admins':
      return 'admins';
  }
}
