/**
 * The workspaces a removal left without the app: one workspace, or an Enterprise Grid organisation's
 * workspaces but those still served by an install of their own (`keptTeamIds`).
 */
export type RemovedWorkspaces = { teamId: string } | { enterpriseId: string; keptTeamIds: readonly string[] };

/** An installation, by whose it is. */
export interface InstallKey {
  teamId: string | null;
  enterpriseId: string | null;
  enterpriseInstall: boolean;
}

/**
 * Which workspaces lost the app when `removed` (a workspace's install, or an organisation's) was deleted and
 * `remaining` are the installations left. A workspace is served by its own install first, then by its
 * organisation's (src/slack/installations/installation-store.ts), so an organisation's removal leaves out the
 * workspaces with an install of their own, and a workspace's removal changes nothing while its organisation's
 * install remains. Undefined when no workspace lost the app.
 */
export function workspacesLeft(
  removed: { teamId?: string | undefined; enterpriseId?: string | undefined; orgWide: boolean },
  remaining: readonly InstallKey[],
): RemovedWorkspaces | undefined {
  if (removed.orgWide) {
    if (!removed.enterpriseId) return undefined;
    const keptTeamIds = remaining.flatMap((i) =>
      !i.enterpriseInstall && i.enterpriseId === removed.enterpriseId && i.teamId ? [i.teamId] : [],
    );
    return { enterpriseId: removed.enterpriseId, keptTeamIds };
  }
  if (!removed.teamId) return undefined;
  const organisationServes = remaining.some(
    (i) =>
      i.enterpriseInstall && removed.enterpriseId !== undefined && i.enterpriseId === removed.enterpriseId,
  );
  return organisationServes ? undefined : { teamId: removed.teamId };
}
