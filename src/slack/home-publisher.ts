import type { webApi } from '@slack/bolt';
import type { ApprovalRecord } from '../approvals/approval.js';
import type { AuditQueries } from '../approvals/audit-queries.js';
import {
  concernedViewers,
  HOME_VIEWER_TTL_MS,
  type HomeViewerStore,
  MAX_HOME_VIEWERS,
} from '../approvals/home-viewers.js';
import { decidingRule, mayDecide } from '../approvals/policy.js';
import type { Clock } from '../clock.js';
import type { DecisionWatchers } from '../conversations/decision-follow-up.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AuditAccess } from './audit-access.js';
import { buildHomeView, HOME_DECISIONS, type HomeContent } from './blocks/home-view.js';

export interface HomePublisher extends DecisionWatchers {
  /** Builds and publishes this person's Home tab. */
  publish(userId: string, teamId: string): Promise<void>;
  /** Refreshes the Home tab of everyone who opened it and whom this change concerns. Never throws. */
  afterDecision(approval: ApprovalRecord, deciders: readonly string[]): Promise<void>;
}

export interface HomePublisherDeps {
  queries: AuditQueries;
  /** People who opened the tab, in the database: a decision taken in any process refreshes their views. */
  viewers: HomeViewerStore;
  access: AuditAccess;
  /** Configured admins (ADMIN_USER_IDS), who may decide what the rules give to admins. */
  isAdmin(userId: string): boolean;
  /** Whom this person decides for now (delegations to them in force); without it, nobody. */
  delegators?: (teamId: string, userId: string) => Promise<readonly string[]>;
  clock: Clock;
  logger: Logger;
}

/** Pending requests read to find those waiting for one person; more are counted, not scanned. */
const PENDING_SCAN = 500;

export function createHomePublisher(client: webApi.WebClient, deps: HomePublisherDeps): HomePublisher {
  const content = async (userId: string, teamId: string, auditor: boolean): Promise<HomeContent> => {
    if (auditor) {
      const pending = await deps.queries.pending(teamId, { limit: 30, offset: 0 });
      const decisions = (await deps.queries.history({ teamId, limit: HOME_DECISIONS, offset: 0 })).items;
      // Auditors see every request; buttons only where they could decide (from Home: no conversation; once a
      // request is escalated, its `escalateTo` too).
      const isAdmin = deps.isAdmin(userId);
      const decidable = new Set(
        pending.items
          .filter(
            (a) =>
              mayDecide(decidingRule(a.rule), a.requesterId, { userId, isAdmin, inConversation: false }).ok,
          )
          .map((a) => a.id),
      );
      return { kind: 'admin', pending: pending.items, pendingTotal: pending.total, decisions, decidable };
    }
    // From Home a click has no conversation, so only rules that name this person (or the requester) count,
    // or, through a delegation, someone they decide for (never lifting the rule's self-approval setting).
    const delegators = (await deps.delegators?.(teamId, userId)) ?? [];
    const waiting = (await deps.queries.pending(teamId, { limit: PENDING_SCAN, offset: 0 })).items.filter(
      (a) => {
        const rule = decidingRule(a.rule);
        const own = mayDecide(rule, a.requesterId, { userId, isAdmin: false, inConversation: false });
        if (own.ok || own.reason === 'self_approval') return own.ok;
        return delegators.some(
          (delegator) =>
            mayDecide(rule, a.requesterId, {
              userId: delegator,
              isAdmin: deps.isAdmin(delegator),
              inConversation: false,
            }).ok,
        );
      },
    );
    return { kind: 'user', waiting, requests: await deps.queries.requestsBy(teamId, userId, 20) };
  };

  const show = async (userId: string, teamId: string, auditor: boolean) => {
    await client.views.publish({
      user_id: userId,
      view: buildHomeView(await content(userId, teamId, auditor)),
    });
  };

  return {
    async publish(userId, teamId) {
      const auditor = await deps.access.isAuditor(userId);
      const now = deps.clock.now();
      await deps.viewers.remember({ teamId, userId, auditor }, now, now - HOME_VIEWER_TTL_MS);
      await show(userId, teamId, auditor);
    },
    async afterDecision(approval, deciders) {
      try {
        const window = { since: deps.clock.now() - HOME_VIEWER_TTL_MS, limit: MAX_HOME_VIEWERS };
        const viewers = await deps.viewers.viewers(approval.teamId, window);
        const concerned = concernedViewers(viewers, approval, deciders);
        for (const viewer of concerned) {
          await show(viewer.userId, viewer.teamId, viewer.auditor).catch((error: unknown) => {
            deps.logger.warn('home refresh failed', { userId: viewer.userId, error: describeError(error) });
          });
        }
      } catch (error) {
        deps.logger.warn('home views could not be refreshed', { error: describeError(error) });
      }
    },
  };
}
