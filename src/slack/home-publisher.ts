import type { ApprovalRecord } from '../approvals/approval.js';
import type { ApprovalLists } from '../approvals/audit-queries.js';
import { type Deciders, workspaceOf } from '../approvals/deciders.js';
import {
  concernedViewers,
  HOME_VIEWER_TTL_MS,
  type HomeViewerStore,
  MAX_HOME_VIEWERS,
} from '../approvals/home-viewers.js';
import { byRiskThenAge } from '../approvals/risk.js';
import type { Workspace } from '../approvals/team-admins.js';
import type { Clock } from '../clock.js';
import type { DecisionWatchers } from '../conversations/decision-follow-up.js';
import { describeError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AuditAccess } from './audit-access.js';
import { buildHomeView, HOME_DECISIONS, type HomeContent, MAX_PENDING_SHOWN } from './blocks/home-view.js';
import type { SlackClients } from './installations/team-clients.js';

export interface HomePublisher extends DecisionWatchers {
  /** Builds and publishes this person's Home tab, in their workspace (of its organisation on Enterprise Grid). */
  publish(userId: string, workspace: Workspace): Promise<void>;
  /** Refreshes the Home tab of everyone who opened it and whom this change concerns. Never throws. */
  afterDecision(approval: ApprovalRecord, deciders: readonly string[]): Promise<void>;
}

export interface HomePublisherDeps {
  queries: ApprovalLists;
  /** People who opened the tab, in the database: a decision taken in any process refreshes their views. */
  viewers: HomeViewerStore;
  access: AuditAccess;
  /** Which requests a person may decide from Home (no conversation). */
  deciders: Pick<Deciders, 'decidableFromHome' | 'breakGlassFromHome'>;
  clock: Clock;
  logger: Logger;
}

/** Pending requests read to find those waiting for one person; more are counted, not scanned. */
const PENDING_SCAN = 500;

export function createHomePublisher(clients: SlackClients, deps: HomePublisherDeps): HomePublisher {
  const content = async (userId: string, workspace: Workspace, auditor: boolean): Promise<HomeContent> => {
    const { teamId } = workspace;
    if (auditor) {
      // Read past what is shown: Home puts the riskiest first, wherever they are in the queue.
      const pending = await deps.queries.pending(teamId, { limit: PENDING_SCAN, offset: 0 });
      const shown = [...pending.items].sort(byRiskThenAge).slice(0, MAX_PENDING_SHOWN);
      // A page by position, whose total the daily totals give: nothing here counts the workspace's requests.
      const decisions = (await deps.queries.decided({ teamId, limit: HOME_DECISIONS })).items;
      // Auditors see every request; buttons only where they could decide from Home.
      const decidable = await deps.deciders.decidableFromHome(shown, userId, workspace);
      const undecidable = shown.filter((approval) => !decidable.has(approval.id));
      const breakGlass = await deps.deciders.breakGlassFromHome(undecidable, userId, workspace);
      return {
        kind: 'admin',
        pending: shown,
        pendingTotal: pending.total,
        decisions,
        decidable,
        breakGlass,
      };
    }
    const scanned = (await deps.queries.pending(teamId, { limit: PENDING_SCAN, offset: 0 })).items;
    const decidable = await deps.deciders.decidableFromHome(scanned, userId, workspace);
    const waiting = scanned.filter((approval) => decidable.has(approval.id));
    return { kind: 'user', waiting, requests: await deps.queries.requestsBy(teamId, userId, 20) };
  };

  const show = async (userId: string, workspace: Workspace, auditor: boolean) => {
    // Each Home is published in its viewer's workspace, with that workspace's token.
    await clients.forTeam(workspace.teamId, workspace.enterpriseId).views.publish({
      user_id: userId,
      view: buildHomeView(await content(userId, workspace, auditor)),
    });
  };

  return {
    async publish(userId, workspace) {
      const auditor = await deps.access.isAuditor(workspace, userId);
      const now = deps.clock.now();
      const { teamId } = workspace;
      await deps.viewers.remember({ teamId, userId, auditor }, now, now - HOME_VIEWER_TTL_MS);
      await show(userId, workspace, auditor);
    },
    async afterDecision(approval, deciders) {
      try {
        const window = { since: deps.clock.now() - HOME_VIEWER_TTL_MS, limit: MAX_HOME_VIEWERS };
        const viewers = await deps.viewers.viewers(approval.teamId, window);
        const concerned = concernedViewers(viewers, approval, deciders);
        for (const viewer of concerned) {
          // Viewers of the request's workspace: its organisation is the request's.
          await show(viewer.userId, workspaceOf(approval), viewer.auditor).catch((error: unknown) => {
            deps.logger.warn('home refresh failed', { userId: viewer.userId, error: describeError(error) });
          });
        }
      } catch (error) {
        deps.logger.warn('home views could not be refreshed', { error: describeError(error) });
      }
    },
  };
}
