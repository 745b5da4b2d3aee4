import type { ApprovalRecord } from './approval.js';
import { decidingRule } from './policy.js';

/** Someone who opened the app's Home tab, and which view they saw. */
export interface HomeViewer {
  teamId: string;
  userId: string;
  /** They saw the admins' view: every request of the workspace. */
  auditor: boolean;
}

/**
 * Who has a Home tab open on this workspace, kept in the database so that a decision taken in any process
 * refreshes the views of people who opened their tab in another.
 */
export interface HomeViewerStore {
  /** Records that `viewer` opened the tab at `at`; forgets the workspace's viewers who opened it before `forgetBefore`. */
  remember(viewer: HomeViewer, at: number, forgetBefore?: number): Promise<void>;
  /** The workspace's viewers who opened the tab since `since`, the latest first, at most `limit`. */
  viewers(teamId: string, window?: { since: number; limit: number }): Promise<HomeViewer[]>;
}

/**
 * Whose Home tab is refreshed after a decision: people who opened it within a week, 200 at most, so the list
 * (and the work after each decision) stays bounded however many people ever opened it. Older entries are
 * deleted when someone opens the tab.
 */
export const HOME_VIEWER_TTL_MS = 7 * 86_400_000;
export const MAX_HOME_VIEWERS = 200;

/**
 * The viewers a changed request concerns: admins, its deciders, its requester and the people its rule names
 * (with `escalateTo` once it was escalated).
 */
export function concernedViewers(
  viewers: readonly HomeViewer[],
  approval: Pick<ApprovalRecord, 'teamId' | 'requesterId' | 'rule'>,
  deciders: readonly string[],
): HomeViewer[] {
  const named = decidingRule(approval.rule).approvers;
  return viewers.filter(
    (viewer) =>
      viewer.teamId === approval.teamId &&
      (viewer.auditor ||
        deciders.includes(viewer.userId) ||
        viewer.userId === approval.requesterId ||
        named.includes(viewer.userId)),
  );
}
