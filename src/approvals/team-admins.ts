import { type AuditInput, auditEvent } from '../audit/audit-event.js';

/**
 * A workspace and its Enterprise Grid organisation, as the request, run or clicker carries them (undefined
 * outside Grid). The organisation is never optional to name: it decides whose org-wide install counts.
 */
export interface Workspace {
  teamId: string;
  enterpriseId: string | undefined;
}

/** Who the admins of each workspace are: the one question every rule naming `admins` asks. */
export interface AdminDirectory {
  /**
   * The admins of `teamId`'s workspace (never another workspace's), of organisation `enterpriseId` as the
   * request, run or clicker carries it: the organisation's installer counts only through it.
   */
  adminsOf(teamId: string, enterpriseId: string | undefined): Promise<readonly string[]>;
}

/** With one bot token: ADMIN_USER_IDS, the admins of the one workspace (and of the terminal's). */
export function fixedAdmins(adminUserIds: readonly string[]): AdminDirectory {
  return { adminsOf: async () => adminUserIds };
}

/** A change to a workspace's admins, by an admin of it (`/approvals admins`) or by an operator (`npm run db`). */
export interface AdminChange {
  teamId: string;
  /** The workspace's organisation, as the command's payload names it: its installer is kept like the workspace's. */
  enterpriseId: string | undefined;
  userId: string;
  action: 'add' | 'remove';
  /** Who changed it: a Slack user ID, or `operator` from the command line. */
  by: string;
  at: number;
}

export type AdminChangeResult =
  | { ok: true; admins: string[] }
  | { ok: false; reason: 'already_admin' | 'not_admin' | 'last_admin'; admins: string[] };

/**
 * The admins of each workspace installed through OAuth, kept in the database (`team_admins`). Until its list
 * is first changed, a workspace's admins are the person who installed the app there, or on Enterprise Grid
 * the person who installed it for the whole organisation (`installerOf`); the first change writes that
 * installer into the list, so they stay an admin until someone removes them.
 */
export interface TeamAdminStore extends AdminDirectory {
  /** Applies `changedAdmins` in one transaction with its audit event; a refused change records nothing. */
  change(change: AdminChange): Promise<AdminChangeResult>;
}

/** Who installed the app where a workspace's admins may come from, as stored. */
export interface Installers {
  /** Who installed it in the workspace itself (its own install). */
  workspace: string | undefined;
  /**
   * Who installed it for the whole Enterprise Grid organisation the request, run or clicker names (an org-wide
   * install); undefined outside Grid.
   */
  organisation: string | undefined;
}

/**
 * The installer a workspace's admins start from: its own installer when it has its own install (inside an
 * organisation or not), else its organisation's installer, who installed the app for every workspace of it.
 */
export function installerOf(installers: Installers): string | undefined {
  return installers.workspace ?? installers.organisation;
}

/**
 * A workspace's admins from what is stored: its list once anyone changed it, else its installer (`installerOf`;
 * none when nobody is known). Pure; the store calls it with its rows.
 */
export function adminsFrom(listed: readonly string[], installers: Installers): string[] {
  if (listed.length > 0) return [...listed];
  const installer = installerOf(installers);
  return installer === undefined ? [] : [installer];
}

/**
 * Who must be written into a list that is changed for the first time, so that they stay admins after it: the
 * admins so far (the installer) when nothing is listed yet, nobody otherwise.
 */
export function adminsToList(listed: readonly string[], current: readonly string[]): string[] {
  return listed.length > 0 ? [] : [...current];
}

/**
 * The list after a change, or why it is refused: adding an admin twice, removing someone who is not one, and
 * removing the last one (a workspace always keeps an admin who can name others). Pure; the store calls it in its
 * transaction.
 */
export function changedAdmins(current: readonly string[], change: AdminChange): AdminChangeResult {
  const admins = [...current];
  const listed = admins.includes(change.userId);
  if (change.action === 'add')
    return listed
      ? { ok: false, reason: 'already_admin', admins }
      : { ok: true, admins: [...admins, change.userId] };
  if (!listed) return { ok: false, reason: 'not_admin', admins };
  if (admins.length === 1) return { ok: false, reason: 'last_admin', admins };
  return { ok: true, admins: admins.filter((id) => id !== change.userId) };
}

/** The audit event of an accepted change: `team.admin_added` or `team.admin_removed`, in that workspace. */
export function adminChangeEvent(change: AdminChange): AuditInput {
  return auditEvent(change.action === 'add' ? 'team.admin_added' : 'team.admin_removed', {
    at: change.at,
    actor: change.by,
    teamId: change.teamId,
    enterpriseId: change.enterpriseId ?? null,
    payload: { userId: change.userId },
  });
}
