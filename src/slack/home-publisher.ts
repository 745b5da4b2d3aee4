import type { webApi } from '@slack/bolt';
import type { ApprovalRecord } from '../approvals/approval.js';
import { mayDecide } from '../approvals/policy.js';
import type { AuditQueries } from '../audit/audit-queries.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AuditAccess } from './audit-access.js';
import { buildHomeView, HOME_DECISIONS, type HomeContent } from './blocks/home-view.js';

export interface HomePublisher {
  /** Builds and publishes this person's Home tab. */
  publish(userId: string, teamId: string): Promise<void>;
  /** Refreshes the Home tab of everyone who opened it and whom this decision concerns. Never throws. */
  afterDecision(approval: ApprovalRecord, deciders: readonly string[]): Promise<void>;
}

export interface HomePublisherDeps {
  queries: AuditQueries;
  access: AuditAccess;
  logger: Logger;
}

/** Pending requests read to find those waiting for one person; more are counted, not scanned. */
const PENDING_SCAN = 500;

export function createHomePublisher(client: webApi.WebClient, deps: HomePublisherDeps): HomePublisher {
  /** People who opened the tab since start-up, so refreshes go only to views someone has seen. */
  const viewers = new Map<string, { teamId: string; auditor: boolean }>();

  const content = (userId: string, teamId: string, auditor: boolean): HomeContent => {
    if (auditor) {
      const pending = deps.queries.pending(teamId, { limit: 30, offset: 0 });
      const decisions = deps.queries.history({ teamId, limit: HOME_DECISIONS, offset: 0 }).items;
      return { kind: 'admin', pending: pending.items, pendingTotal: pending.total, decisions };
    }
    // From Home a click has no conversation, so only rules that name this person (or the requester) count.
    const waiting = deps.queries
      .pending(teamId, { limit: PENDING_SCAN, offset: 0 })
      .items.filter(
        (a) => mayDecide(a.rule, a.requesterId, { userId, isAdmin: false, inConversation: false }).ok,
      );
    return { kind: 'user', waiting, requests: deps.queries.requestsBy(teamId, userId, 20) };
  };

  const publish = async (userId: string, teamId: string) => {
    const auditor = await deps.access.isAuditor(userId);
    viewers.set(userId, { teamId, auditor });
    await client.views.publish({ user_id: userId, view: buildHomeView(content(userId, teamId, auditor)) });
  };

  return {
    publish,
    async afterDecision(approval, deciders) {
      const concerned = [...viewers].filter(
        ([userId, viewer]) =>
          viewer.teamId === approval.teamId &&
          (viewer.auditor ||
            deciders.includes(userId) ||
            userId === approval.requesterId ||
            approval.rule.approvers.includes(userId)),
      );
      for (const [userId] of concerned) {
        await publish(userId, approval.teamId).catch((error: unknown) => {
          deps.logger.warn('home refresh failed', { userId, error: describeError(error) });
        });
      }
    },
  };
}
