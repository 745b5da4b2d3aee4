import type { ApprovalRecord } from './approval.js';

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
  remember(viewer: HomeViewer, at: number): Promise<void>;
  viewers(teamId: string): Promise<HomeViewer[]>;
}

/** The viewers a changed request concerns: admins, its deciders, its requester and the people its rule names. */
export function concernedViewers(
  viewers: readonly HomeViewer[],
  approval: Pick<ApprovalRecord, 'teamId' | 'requesterId' | 'rule'>,
  deciders: readonly string[],
): HomeViewer[] {
  return viewers.filter(
    (viewer) =>
      viewer.teamId === approval.teamId &&
      (viewer.auditor ||
        deciders.includes(viewer.userId) ||
        viewer.userId === approval.requesterId ||
        approval.rule.approvers.includes(viewer.userId)),
  );
}
