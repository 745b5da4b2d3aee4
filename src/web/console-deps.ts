import type { ApprovalService } from '../approvals/approval-service.js';
import type { ArgumentEditService } from '../approvals/argument-edit-service.js';
import type { AuditQueries } from '../approvals/audit-queries.js';
import type { Deciders } from '../approvals/deciders.js';
import type { ApprovalPolicy } from '../approvals/policy.js';
import type { ApprovalStore } from '../approvals/ports.js';
import type { Workspace } from '../approvals/team-admins.js';
import type { ChainCheck } from '../audit/chain-check.js';
import type { Clock } from '../clock.js';
import type { ConsoleConfig } from '../config.js';
import type { ConsoleAccess } from '../console/console-access.js';
import type { ConsoleSession, SlackSignIn } from '../console/ports.js';
import type { RunWork } from '../conversations/run-work.js';
import type { Logger } from '../logger.js';

/** What the web console is built on: the same core services as the Slack surfaces. */
export interface ConsoleDeps {
  access: ConsoleAccess;
  deciders: Deciders;
  approvals: Pick<ApprovalService, 'decide'>;
  edits: Pick<ArgumentEditService, 'submit' | 'readable'>;
  /** What follows a decision (cards, the run, App Home), wherever it was made. */
  work: Pick<RunWork, 'settled'>;
  queries: AuditQueries;
  /** Who approved a request so far (quorum progress). */
  votes: Pick<ApprovalStore, 'approvers'>;
  /** Sign in with Slack; undefined unless SLACK_CLIENT_ID and SLACK_CLIENT_SECRET are set. */
  slackSignIn: SlackSignIn | undefined;
  /**
   * The policy in force (read at each request: a reload on SIGHUP shows at once), the tool names a candidate
   * policy is checked against (as `npm run policy` checks a file), and the admins a replay counts as such.
   */
  policy: { inForce: () => ApprovalPolicy; toolNames: readonly string[]; adminUserIds: readonly string[] };
  /** The audit chain's verification, at most once a minute for pages, on demand for the button. */
  chainCheck: Pick<ChainCheck, 'latest' | 'now'>;
  /**
   * The workspace a sign-in opens: the one the bot is installed in (one bot token: asked of Slack once), or,
   * installed into several workspaces, `teamId` itself when the app is installed there or in its Enterprise
   * Grid organisation (`enterpriseId`). Rejects when none.
   */
  installedTeam: (teamId?: string, enterpriseId?: string | null) => Promise<string>;
  config: ConsoleConfig & { slackApiUrl: string };
  clock: Clock;
  logger: Logger;
}

/** What a request handler knows once the session is checked. */
export interface ConsoleEnv {
  Variables: { session: ConsoleSession; sessionToken: string };
}

/** What a signed-in person may do in the console. */
export interface Roles {
  /** Admins: every request of the workspace, the history, the policy. */
  admin: boolean;
  /** Admins and auditors: the history and charts. */
  auditor: boolean;
}

/**
 * The workspace of a console session, with the Enterprise Grid organisation Slack's sign-in named (so an
 * organisation-wide install's installer is an admin there); a link's session names none.
 */
export function sessionWorkspace(session: Pick<ConsoleSession, 'teamId' | 'enterpriseId'>): Workspace {
  return { teamId: session.teamId, enterpriseId: session.enterpriseId ?? undefined };
}

/** A person's roles in the workspace of their session (an admin of one workspace is nothing in another). */
export async function rolesOf(
  deps: Pick<ConsoleDeps, 'deciders'>,
  session: Pick<ConsoleSession, 'teamId' | 'enterpriseId' | 'userId'>,
): Promise<Roles> {
  const workspace = sessionWorkspace(session);
  return {
    admin: await deps.deciders.isAdmin(workspace, session.userId),
    auditor: await deps.deciders.isAuditor(workspace, session.userId),
  };
}
