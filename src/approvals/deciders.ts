import type { Clock } from '../clock.js';
import type { ApprovalRecord, ApprovalRule, Approver } from './approval.js';
import type { ApprovalReview } from './approval-review.js';
import {
  type AcknowledgePermission,
  type BreakGlassPermission,
  mayAcknowledge,
  mayBreakGlass,
} from './break-glass.js';
import { type Delegation, type DelegationStore, maySomeoneDecide } from './delegation.js';
import { type DecisionPermission, decidingRule, mayDecide } from './policy.js';
import type { GroupDirectory } from './ports.js';
import { type AdminDirectory, fixedAdmins, type Workspace } from './team-admins.js';
import { groupMembersOf, namedDeciders } from './who-to-tell.js';

export interface DecidersDeps {
  clock: Clock;
  /**
   * Each workspace's admins: approval rights where a rule names admins, and on every request of their workspace
   * as its reader. With one bot token ADMIN_USER_IDS (`fixedAdmins`); installed into several workspaces, each
   * workspace's own list (team-admins.ts). Takes the place of `adminUserIds` when given.
   */
  admins?: AdminDirectory | undefined;
  /** ADMIN_USER_IDS, the admins of every workspace: for one bot token, the terminal and tests. */
  adminUserIds?: readonly string[] | undefined;
  /** AUDITOR_USER_IDS: readers of every request and of the audit log, with no right to decide. */
  auditorUserIds?: readonly string[] | undefined;
  /** Members of user groups named in rules; without it nobody matches a group. */
  groups?: GroupDirectory | undefined;
  /** Delegations of deciding; without it nobody decides through one. */
  delegations?: Pick<DelegationStore, 'activeFor'> | undefined;
  /** Who already approved a request: a delegator's say never counts twice through a delegate. */
  votes?: { approvers(approvalId: string): Promise<string[]> } | undefined;
}

/** Who may see a request, and from where: the person, and the channel their click came from (if any). */
export interface Viewer {
  userId: string;
  /** The channel of the message they clicked on, as Slack signed it; undefined from a modal or App Home. */
  channelId: string | undefined;
}

/** A person's right to decide a request now, and the delegation it comes through when the rule does not name them. */
export interface DecisionRight {
  permission: DecisionPermission;
  delegation?: Delegation;
}

/**
 * Who may see, decide, approve for a thread, delegate, and be asked about requests: the one place every
 * surface (cards, modals, App Home, `/approvals`, the terminal) asks, so that they cannot disagree. It reads
 * the rule stored with each request (with `escalateTo` once escalated), the admins, user groups and
 * delegations; it records nothing.
 */
export class Deciders {
  readonly #deps: DecidersDeps;
  readonly #admins: AdminDirectory;

  constructor(deps: DecidersDeps) {
    this.#deps = deps;
    this.#admins = deps.admins ?? fixedAdmins(deps.adminUserIds ?? []);
  }

  /** Whether this person is an admin of this workspace (never of another one). */
  async isAdmin(workspace: Workspace, userId: string): Promise<boolean> {
    return (await this.#adminsIn(workspace)).includes(userId);
  }

  /** Whether this person may read every request of this workspace and its audit log: its admins and auditors. */
  async isAuditor(workspace: Workspace, userId: string): Promise<boolean> {
    return (await this.isAdmin(workspace, userId)) || (this.#deps.auditorUserIds ?? []).includes(userId);
  }

  /** The admins of this workspace of this organisation, for those who must be told or named. */
  adminsOf(teamId: string, enterpriseId: string | undefined): Promise<readonly string[]> {
    return this.#admins.adminsOf(teamId, enterpriseId);
  }

  #adminsIn(workspace: Workspace): Promise<readonly string[]> {
    return this.adminsOf(workspace.teamId, workspace.enterpriseId);
  }

  /**
   * Members of the user groups among `approvers`, in `teamId`'s workspace: the one place group membership is
   * looked up.
   */
  groupMembers(approvers: readonly Approver[], teamId: string): Promise<Map<string, ReadonlySet<string>>> {
    return groupMembersOf(approvers, this.#deps.groups, teamId);
  }

  /**
   * Whether `userId` may decide `approval` from `channelId` under its rule (with `escalateTo` once escalated)
   * or, when the rule does not name them, through a delegation in force from someone it names who has not
   * voted yet.
   */
  async right(
    approval: ApprovalRecord,
    userId: string,
    channelId: string | undefined,
  ): Promise<DecisionRight> {
    const rule = decidingRule(approval.rule);
    const groupMembers = await this.groupMembers(rule.approvers, approval.teamId);
    const admins = await this.#adminsIn(workspaceOf(approval));
    const permission = mayDecide(rule, approval.requesterId, {
      userId,
      isAdmin: admins.includes(userId),
      inConversation: channelId === approval.channelId,
      groupMembers,
    });
    if (permission.ok || permission.reason !== 'not_an_approver') return { permission };
    const found = await this.#delegationsTo(approval.teamId, userId);
    if (found.length === 0) return { permission };
    const voted = (await this.#deps.votes?.approvers(approval.id)) ?? [];
    const allows = this.#ruleAllows(rule, approval.requesterId, groupMembers, admins);
    const delegation = found.find((d) => !voted.includes(d.delegatorId) && allows(d));
    return delegation ? { permission: { ok: true }, delegation } : { permission };
  }

  /**
   * Whether `userId` may break glass on `approval` (approve it though its rule would refuse them): an admin
   * whom the rule, from anywhere, does not let decide it, on a request whose rule does not forbid it.
   */
  async breakGlass(approval: ApprovalRecord, userId: string): Promise<BreakGlassPermission> {
    const { permission } = await this.right(approval, userId, undefined);
    return mayBreakGlass(approval.rule, permission, await this.isAdmin(workspaceOf(approval), userId));
  }

  /** Whether `userId` may acknowledge the break-glass approval of `approval`: another admin, once. */
  async mayAcknowledge(approval: ApprovalRecord, userId: string): Promise<AcknowledgePermission> {
    return mayAcknowledge(approval.breakGlass, userId, await this.isAdmin(workspaceOf(approval), userId));
  }

  /**
   * Whether this person may read a request's every argument: whoever may decide it (from anywhere), its
   * requester, admins and auditors, and the members of the conversation it was posted in (their click came from its
   * channel, or from the rule's approval channel where its copy is posted).
   */
  async maySee(approval: ApprovalRecord, viewer: Viewer): Promise<boolean> {
    const { userId, channelId } = viewer;
    if (userId === approval.requesterId || (await this.isAuditor(workspaceOf(approval), userId))) return true;
    if (
      channelId !== undefined &&
      (channelId === approval.channelId || channelId === approval.rule.approvalChannel)
    )
      return true;
    return (await this.right(approval, userId, undefined)).permission.ok;
  }

  /**
   * Whether the grantor of a standing approval may still approve the tool under today's rule: admins removed
   * from ADMIN_USER_IDS, people taken out of a named group or of the rule lose what they granted. They were in
   * the conversation when they granted it, and that stays true. A grant made through a delegation lasts while
   * a delegation to its grantor from someone today's rule allows is in force.
   */
  async mayStillGrant(
    rule: ApprovalRule,
    requesterId: string,
    grantedBy: string,
    workspace: Workspace,
  ): Promise<boolean> {
    if (!rule.allowStandingApproval || rule.quorum > 1) return false;
    const { teamId } = workspace;
    const groupMembers = await this.groupMembers(rule.approvers, teamId);
    const admins = await this.#adminsIn(workspace);
    const permission = mayDecide(rule, requesterId, {
      userId: grantedBy,
      isAdmin: admins.includes(grantedBy),
      inConversation: true,
      groupMembers,
    });
    if (permission.ok || permission.reason !== 'not_an_approver') return permission.ok;
    const found = await this.#delegationsTo(teamId, grantedBy);
    return found.some(this.#ruleAllows(rule, requesterId, groupMembers, admins));
  }

  /** Whether `userId` may decide some tool under the policy's `named` approvers: only such people may delegate. */
  async mayDelegate(workspace: Workspace, userId: string, named: readonly Approver[]): Promise<boolean> {
    const isAdmin = await this.isAdmin(workspace, userId);
    return maySomeoneDecide(named, userId, isAdmin, await this.groupMembers(named, workspace.teamId));
  }

  /**
   * Of these pending requests, the ids this person may decide from App Home (no conversation: only rules that
   * name them, as a user, a group member or an admin, or through a delegation from someone they name; the
   * rule's self-approval setting is never lifted).
   */
  async decidableFromHome(
    pending: readonly ApprovalRecord[],
    userId: string,
    workspace: Workspace,
  ): Promise<Set<string>> {
    const { teamId } = workspace;
    const delegations = await this.#delegationsTo(teamId, userId);
    const admins = await this.#adminsIn(workspace);
    const decidable = new Set<string>();
    for (const approval of pending) {
      if (approval.teamId !== teamId) continue;
      const rule = decidingRule(approval.rule);
      const groupMembers = await this.groupMembers(rule.approvers, approval.teamId);
      const own = mayDecide(rule, approval.requesterId, {
        userId,
        isAdmin: admins.includes(userId),
        inConversation: false,
        groupMembers,
      });
      const allowed =
        own.ok ||
        (own.reason === 'not_an_approver' &&
          delegations.some(this.#ruleAllows(rule, approval.requesterId, groupMembers, admins)));
      if (allowed) decidable.add(approval.id);
    }
    return decidable;
  }

  /**
   * Where the review card of a break-glass approval goes: the rule's approval channel, else every other admin by
   * direct message (the admin who broke glass cannot acknowledge it).
   */
  async breakGlassReviewers(approval: ApprovalRecord): Promise<string[]> {
    if (approval.rule.approvalChannel) return [approval.rule.approvalChannel];
    return (await this.#adminsIn(workspaceOf(approval))).filter((id) => id !== approval.breakGlass?.by);
  }

  /** Of these pending requests of this workspace, the ids on which this person may break glass from App Home. */
  async breakGlassFromHome(
    pending: readonly ApprovalRecord[],
    userId: string,
    workspace: Workspace,
  ): Promise<Set<string>> {
    const allowed = new Set<string>();
    if (!(await this.isAdmin(workspace, userId))) return allowed;
    for (const approval of pending)
      if (approval.teamId === workspace.teamId && (await this.breakGlass(approval, userId)).ok)
        allowed.add(approval.id);
    return allowed;
  }

  /**
   * The people to send a request to directly, in the rule's order, each once: listed users, members of
   * listed user groups, and admins (`approvers` defaults to the rule's; an escalation passes `escalateTo`).
   * The requester and "anyone in the conversation" are left out.
   */
  async peopleToTell(
    approval: Pick<ApprovalRecord, 'teamId' | 'enterpriseId' | 'requesterId' | 'rule'>,
    approvers: readonly Approver[] = approval.rule.approvers,
  ): Promise<string[]> {
    return namedDeciders(
      { approvers: [...approvers] },
      approval.requesterId,
      await this.#adminsIn(workspaceOf(approval)),
      await this.groupMembers(approvers, approval.teamId),
    );
  }

  async #delegationsTo(teamId: string, userId: string): Promise<Delegation[]> {
    const { delegations, clock } = this.#deps;
    return (await delegations?.activeFor(teamId, userId, clock.now())) ?? [];
  }

  /** Whether the rule allows a delegation's delegator, who decides through it from anywhere. */
  #ruleAllows(
    rule: ApprovalRule,
    requesterId: string,
    groupMembers: ReadonlyMap<string, ReadonlySet<string>>,
    admins: readonly string[],
  ): (delegation: Delegation) => boolean {
    return (delegation) =>
      mayDecide(rule, requesterId, {
        userId: delegation.delegatorId,
        isAdmin: admins.includes(delegation.delegatorId),
        inConversation: false,
        groupMembers,
      }).ok;
  }
}

/** The workspace a request belongs to, with the organisation stored with it. */
export function workspaceOf(approval: Pick<ApprovalRecord, 'teamId' | 'enterpriseId'>): Workspace {
  return { teamId: approval.teamId, enterpriseId: approval.enterpriseId };
}

/**
 * Whether the reviewer (a model, never a person) may approve a request on its own: only when the rule says
 * `autoApprove: "review"`, the request needs one approval, and the reviewer's note is a structured answer
 * that raised no flag. Anything else, a note it could not write included, leaves the request to people.
 */
export function reviewerMayApprove(
  rule: Pick<ApprovalRule, 'autoApprove' | 'quorum'>,
  review: ApprovalReview | undefined,
): boolean {
  if (rule.autoApprove !== 'review' || rule.quorum !== 1 || !review) return false;
  return review.structured && review.flags.length === 0;
}
