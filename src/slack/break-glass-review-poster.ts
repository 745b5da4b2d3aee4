import type { ApprovalRecord } from '../approvals/approval.js';
import type { Deciders } from '../approvals/deciders.js';
import type { DecisionWatchers } from '../conversations/decision-follow-up.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import { buildBreakGlassReview } from './blocks/break-glass.js';
import type { SlackClients } from './installations/team-clients.js';
import { NO_PREVIEWS } from './no-previews.js';

/**
 * Posts the review card of a break-glass approval once it is decided, in its workspace: in the rule's approval channel, else to
 * every other admin by direct message (`Deciders.breakGlassReviewers`). A card Slack refuses is logged; the
 * approval stays listed by `npm run audit -- break-glass` until someone acknowledges it. Never throws.
 */
export function createBreakGlassReviewPoster(
  clients: SlackClients,
  deps: { deciders: Pick<Deciders, 'breakGlassReviewers'>; logger: Logger },
): DecisionWatchers {
  return {
    async afterDecision(approval: ApprovalRecord) {
      if (!approval.breakGlass || approval.breakGlass.acknowledgedBy !== null) return;
      const reviewers = await deps.deciders.breakGlassReviewers(approval);
      if (reviewers.length === 0)
        deps.logger.warn('break-glass approval has no other admin to review it', { approvalId: approval.id });
      const message = buildBreakGlassReview(approval);
      // In the request's own workspace: its channel or its admins' DMs.
      const client = clients.forTeam(approval.teamId, approval.enterpriseId);
      for (const channel of reviewers) {
        await client.chat.postMessage({ channel, ...message, ...NO_PREVIEWS }).catch((error: unknown) => {
          deps.logger.warn('break-glass review card could not be posted', {
            approvalId: approval.id,
            channel,
            error: describeError(error),
          });
        });
      }
    },
  };
}
