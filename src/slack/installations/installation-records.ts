import type { AuditInput } from '../../audit/audit-event.js';

/**
 * One stored installation of the app: whose it is in clear, the installation itself (tokens and all) sealed.
 * `id` is `T:<team>` for a workspace, `E:<enterprise>` for an organisation-wide install.
 */
export interface InstallationRow {
  id: string;
  teamId: string | null;
  enterpriseId: string | null;
  enterpriseInstall: boolean;
  installerUserId: string | null;
  botUserId: string | null;
  sealed: string;
  installedAt: number;
  updatedAt: number;
}

/** One stored installation as the health check sees it: whose, and its bot token when it can be read. */
export interface InstalledWorkspace {
  teamId: string | null;
  enterpriseId: string | null;
  botToken: string | undefined;
}

/** Where installations are kept (implemented in src/db, on both engines). */
export interface InstallationRecords {
  /** Stores a new installation or replaces the one of the same id (a reinstall), with its audit events. */
  save(row: InstallationRow, events: readonly AuditInput[]): Promise<void>;
  find(id: string): Promise<InstallationRow | undefined>;
  /** Deletes it, with its audit events when there was one; false when there was none. */
  remove(id: string, events: readonly AuditInput[]): Promise<boolean>;
  /** Every installation, by id. */
  all(): Promise<InstallationRow[]>;
  /** Replaces the sealed value if it is still `was` (nothing else changed it meanwhile); false otherwise. */
  reseal(id: string, was: string, sealed: string, at: number): Promise<boolean>;
  /**
   * Takes the right to refresh the installation's token (token rotation), for a lease's time: one process at a
   * time. False while another process holds it, or when the installation is gone.
   */
  claimRefresh(id: string): Promise<boolean>;
  /**
   * Stores the refreshed installation in place of `was` (the one refreshed from) and ends the claim, with its
   * audit events; false when the row no longer holds `was` (reinstalled, removed, refreshed by another process),
   * and nothing is stored. Compared on the value, not on the claim: a claim that ran out while Slack answered
   * must not lose the new refresh token, since the old one no longer works.
   */
  refreshed(
    id: string,
    was: string,
    sealed: string,
    at: number,
    events: readonly AuditInput[],
  ): Promise<boolean>;
  /** Lets go of the claim without a new token (the refresh failed). */
  releaseRefresh(id: string): Promise<void>;
}

/** The id of a workspace's installation, or of an organisation's. */
export function installationId(key: { teamId?: string | undefined; enterpriseId?: string | undefined }) {
  if (key.teamId) return `T:${key.teamId}`;
  return key.enterpriseId ? `E:${key.enterpriseId}` : undefined;
}
