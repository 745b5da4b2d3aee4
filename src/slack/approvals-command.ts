import type { ApprovalLists, ApprovalReports } from '../approvals/audit-queries.js';
import type { DelegationStore } from '../approvals/delegation.js';
import type { StandingApprovalStore } from '../approvals/ports.js';
import type { Workspace } from '../approvals/team-admins.js';
import { type AdminsCommandDeps, answerAdminsCommand } from './admins-command.js';
import type { AuditAccess } from './audit-access.js';
import type { SlackMessage } from './blocks/approval-card.js';
import { buildApprovalDetail } from './blocks/approval-detail.js';
import {
  ADMINS_ONLY_TEXT,
  buildApprovalList,
  buildApprovalsHelp,
  buildOverview,
  buildStatsReport,
  REPORT_PAGE_SIZE,
} from './blocks/approvals-report.js';
import { slackDate } from './mrkdwn.js';
import { type ApprovalsCommand, parseApprovalsCommand } from './parse-approvals-command.js';

export interface ApprovalsCommandDeps {
  queries: ApprovalLists & ApprovalReports;
  access: AuditAccess;
  standing: Pick<StandingApprovalStore, 'revoke'>;
  /** The workspace's admins: the only ones who may change anything, such as revoking. */
  isAdmin(workspace: Workspace, userId: string): Promise<boolean>;
  now(): number;
  /** `admins`: the workspace's admins, listed, and changed by one of them. */
  admins: Omit<AdminsCommandDeps, 'now'>;
  /** `delegate`, `delegations`, `undelegate`: open to anyone who may decide some tool. */
  delegation?: DelegationCommandDeps;
}

export interface DelegationCommandDeps {
  store: DelegationStore;
  /** Whether the person may decide some tool of their workspace under the policy in force. */
  mayDelegate(workspace: Workspace, userId: string): Promise<boolean>;
  newId(): string;
}

export interface ApprovalsCommandInput {
  userId: string;
  teamId: string;
  /** The Enterprise Grid organisation the command's payload names; undefined outside Grid. */
  enterpriseId: string | undefined;
  text: string;
}

const REVOKE_ADMINS_ONLY =
  'Only the admins of this workspace can revoke an "Approve for this thread"; audit rights only let you read.';

const DELEGATION_VERB = /^\s*(delegate|undelegate|delegations)\b/i;

/** Requests shown in each part of the overview, so it stays one short message. */
const OVERVIEW_SIZE = 8;

/**
 * The answer to `/approvals …`, for admins only: anyone else gets the same refusal whatever they typed, so the
 * command reveals nothing (not even whether an ID exists). Answers only this workspace's requests.
 */
export async function answerApprovalsCommand(
  deps: ApprovalsCommandDeps,
  { userId, teamId, enterpriseId, text }: ApprovalsCommandInput,
): Promise<SlackMessage> {
  const workspace: Workspace = { teamId, enterpriseId };
  const command = parseApprovalsCommand(text, deps.now());
  if (command.kind === 'delegate' || command.kind === 'delegations' || command.kind === 'undelegate')
    return answerDelegation(deps, command, userId, workspace);
  // Delegation is open to more than admins: what was wrong with such a command is said to anyone.
  if (command.kind === 'help' && DELEGATION_VERB.test(text)) return buildApprovalsHelp(command.problem);
  if (!(await deps.access.isAuditor(workspace, userId))) return { text: ADMINS_ONLY_TEXT, blocks: [] };
  const base = `/approvals ${text.replace(/\s*page:\S*/g, '').trim()}`;
  const pager = (page: number) => ({ page, command: (n: number) => `${base} page:${n}` });
  const slice = (page: number) => ({ limit: REPORT_PAGE_SIZE, offset: (page - 1) * REPORT_PAGE_SIZE });
  switch (command.kind) {
    case 'overview':
      return buildOverview(
        await deps.queries.pending(teamId, { limit: OVERVIEW_SIZE, offset: 0 }),
        await deps.queries.decided({ teamId, limit: OVERVIEW_SIZE }),
      );
    case 'pending':
      return buildApprovalList(
        'Pending approvals',
        await deps.queries.pending(teamId, slice(command.page)),
        pager(command.page),
      );
    case 'history': {
      const { kind: _, page, ...filter } = command;
      const found = await deps.queries.history({ teamId, ...filter, ...slice(page) });
      return buildApprovalList('Decided requests', found, pager(page));
    }
    case 'show': {
      const detail = await deps.queries.detail(teamId, command.approvalId);
      return detail
        ? buildApprovalDetail(detail)
        : buildApprovalsHelp(`There is no request \`${command.approvalId}\` in this workspace.`);
    }
    case 'stats':
      return buildStatsReport(
        await deps.queries.stats(teamId, command.since),
        command.since === undefined ? undefined : slackDate(command.since),
      );
    case 'revoke':
      // Workspace admins given audit rights read; they do not write.
      if (!(await deps.isAdmin(workspace, userId))) return buildApprovalsHelp(REVOKE_ADMINS_ONLY);
      return revoke(deps, teamId, userId, command.approvalId);
    case 'admins': {
      const isAdmin = await deps.isAdmin(workspace, userId);
      return answerAdminsCommand({ ...deps.admins, now: deps.now }, command, {
        userId,
        ...workspace,
        isAdmin,
      });
    }
    case 'help':
      return buildApprovalsHelp(command.problem);
  }
}

const plain = (blockId: string, text: string): SlackMessage => ({
  text,
  blocks: [{ type: 'section', block_id: blockId, text: { type: 'mrkdwn', text } }],
});

const day = (until: number) => new Date(until - 1).toISOString().slice(0, 10);

/** Delegations: granted, listed and ended by the people who may decide, each change audited. */
async function answerDelegation(
  deps: ApprovalsCommandDeps,
  command: Extract<ApprovalsCommand, { kind: 'delegate' | 'delegations' | 'undelegate' }>,
  userId: string,
  workspace: Workspace,
): Promise<SlackMessage> {
  const { teamId } = workspace;
  const delegation = deps.delegation;
  if (!delegation) return plain('delegation', 'Delegation is not available here.');
  // Anyone may list the delegations they gave or received; giving one takes someone who may decide.
  if (command.kind !== 'delegations' && !(await delegation.mayDelegate(workspace, userId)))
    return plain('delegation', 'Only people who may decide approval requests can delegate deciding.');
  const now = deps.now();
  switch (command.kind) {
    case 'delegate': {
      if (command.userId === userId) return plain('delegation', 'You cannot delegate to yourself.');
      await delegation.store.grant({
        id: delegation.newId(),
        teamId,
        delegatorId: userId,
        delegateId: command.userId,
        until: command.until,
        createdAt: now,
      });
      return plain(
        'delegation',
        `Delegated: <@${command.userId}> may decide what you may decide until the end of ${day(command.until)} (UTC). End it with \`/approvals undelegate <@${command.userId}>\`.`,
      );
    }
    case 'undelegate': {
      const ended = await delegation.store.end({
        teamId,
        delegatorId: userId,
        delegateId: command.userId,
        endedBy: userId,
        at: now,
      });
      return plain(
        'delegation',
        ended.length > 0
          ? `Ended: <@${command.userId}> no longer decides for you.`
          : `You have no delegation in force to <@${command.userId}>.`,
      );
    }
    case 'delegations': {
      const found = await delegation.store.involving(teamId, userId, now);
      const lines = found.map((d) =>
        d.delegatorId === userId
          ? `• <@${d.delegateId}> decides for you until the end of ${day(d.until)}`
          : `• You decide for <@${d.delegatorId}> until the end of ${day(d.until)}`,
      );
      return plain(
        'delegations',
        lines.length > 0 ? `*Delegations in force*\n${lines.join('\n')}` : 'No delegations in force.',
      );
    }
  }
}

async function revoke(
  deps: ApprovalsCommandDeps,
  teamId: string,
  userId: string,
  approvalId: string,
): Promise<SlackMessage> {
  const result = await deps.standing.revoke({ teamId, approvalId, userId, at: deps.now() });
  const text = result.ok
    ? `Revoked: \`${result.toolName}\` is no longer approved for that thread (granted by <@${result.grantedBy}> on \`${approvalId}\`). Its next calls ask again.`
    : result.reason === 'not_found'
      ? `There is no request \`${approvalId}\` in this workspace.`
      : `Request \`${approvalId}\` has no active "Approve for this thread" to revoke.`;
  return { text, blocks: [{ type: 'section', block_id: 'revoke', text: { type: 'mrkdwn', text } }] };
}
