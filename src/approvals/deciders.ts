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
import { groupMembersOf, namedDeciders } from './who-to-tell.js';

export interface DecidersDeps {
  clock: Clock;
  /** ADMIN_USER_IDS: approval rights where a rule names admins, and on every request as its reader. */
  adminUserIds: readonly string[];
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

  constructor(deps: DecidersDeps) {
    this.#deps = deps;
  }

  isAdmin(userId: string): boolean {
    return this.#deps.adminUserIds.includes(userId);
  }

  /** Whether this person may read every request and the audit log: admins and auditors. */
  isAuditor(userId: string): boolean {
    return this.isAdmin(userId) || (this.#deps.auditorUserIds ?? []).includes(userId);
  }

  /** The admins (ADMIN_USER_IDS), for those who must be told or named. */
  get adminUserIds(): readonly string[] {
    return this.#deps.adminUserIds;
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
    const permission = mayDecide(rule, approval.requesterId, {
      userId,
      isAdmin: this.isAdmin(userId),
      inConversation: channelId === approval.channelId,
      groupMembers,
    });
    if (permission.ok || permission.reason !== 'not_an_approver') return { permission };
    const found = await this.#delegationsTo(approval.teamId, userId);
    if (found.length === 0) return { permission };
    const voted = (await this.#deps.votes?.approvers(approval.id)) ?? [];
    const delegation = found.find(
      (d) => !voted.includes(d.delegatorId) && this.#ruleAllows(rule, approval.requesterId, d, groupMembers),
    );
    return delegation ? { permission: { ok: true }, delegation } : { permission };
  }

  /**
   * Whether `userId` may break glass on `approval` (approve it though its rule would refuse them): an admin
   * whom the rule, from anywhere, does not let decide it, on a request whose rule does not forbid it.
   */
  async breakGlass(approval: ApprovalRecord, userId: string): Promise<BreakGlassPermission> {
    const { permission } = await this.right(approval, userId, undefined);
    return mayBreakGlass(approval.rule, permission, this.isAdmin(userId));
  }

  /** Whether `userId` may acknowledge the break-glass approval of `approval`: another admin, once. */
  mayAcknowledge(approval: ApprovalRecord, userId: string): AcknowledgePermission {
    return mayAcknowledge(approval.breakGlass, userId, this.isAdmin(userId));
  }

  /**
   * Whether this person may read a request's every argument: whoever may decide it (from anywhere), its
   * requester, admins and auditors, and the members of the conversation it was posted in (their click came from its
   * channel, or from the rule's approval channel where its copy is posted).
   */
  async maySee(approval: ApprovalRecord, viewer: Viewer): Promise<boolean> {
    const { userId, channelId } = viewer;
    if (userId === approval.requesterId || this.isAuditor(userId)) return true;
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
    teamId: string,
  ): Promise<boolean> {
    if (!rule.allowStandingApproval || rule.quorum > 1) return false;
    const groupMembers = await this.groupMembers(rule.approvers, teamId);
    const permission = mayDecide(rule, requesterId, {
      userId: grantedBy,
      isAdmin: this.isAdmin(grantedBy),
      inConversation: true,
      groupMembers,
    });
    if (permission.ok || permission.reason !== 'not_an_approver') return permission.ok;
    const found = await this.#delegationsTo(teamId, grantedBy);
    return found.some((delegation) => this.#ruleAllows(rule, requesterId, delegation, groupMembers));
  }

  /** Whether `userId` may decide some tool under the policy's `named` approvers: only such people may delegate. */
  async mayDelegate(userId: string, named: readonly Approver[], teamId: string): Promise<boolean> {
    return maySomeoneDecide(named, userId, this.isAdmin(userId), await this.groupMembers(named, teamId));
  }

  /**
   * Of these pending requests, the ids this person may decide from App Home (no conversation: only rules that
   * name them, as a user, a group member or an admin, or through a delegation from someone they name; the
   * rule's self-approval setting is never lifted).
   */
  async decidableFromHome(
    pending: readonly ApprovalRecord[],
    userId: string,
    teamId: string,
  ): Promise<Set<string>> {
    const delegations = await this.#delegationsTo(teamId, userId);
    const decidable = new Set<string>();
    for (const approval of pending) {
      const rule = decidingRule(approval.rule);
      const groupMembers = await this.groupMembers(rule.approvers, approval.teamId);
      const own = mayDecide(rule, approval.requesterId, {
        userId,
        isAdmin: this.isAdmin(userId),
        inConversation: false,
        groupMembers,
      });
      const allowed =
        own.ok ||
        (own.reason === 'not_an_approver' &&
          delegations.some((d) => this.#ruleAllows(rule, approval.requesterId, d, groupMembers)));
      if (allowed) decidable.add(approval.id);
    }
    return decidable;
  }

  /**
   * Where the review card of a break-glass approval goes: the rule's approval channel, else every other admin by
   * direct message (the admin who broke glass cannot acknowledge it).
   */
  breakGlassReviewers(approval: ApprovalRecord): string[] {
    if (approval.rule.approvalChannel) return [approval.rule.approvalChannel];
    return this.#deps.adminUserIds.filter((id) => id !== approval.breakGlass?.by);
  }

  /** Of these pending requests, the ids on which this person may break glass from App Home. */
  async breakGlassFromHome(pending: readonly ApprovalRecord[], userId: string): Promise<Set<string>> {
    const allowed = new Set<string>();
    if (!this.isAdmin(userId)) return allowed;
    for (const approval of pending)
      if ((await this.breakGlass(approval, userId)).ok) allowed.add(approval.id);
    return allowed;
  }

  /**
   * The people to send a request to directly, in the rule's order, each once: listed users, members of
   * listed user groups, and admins (`approvers` defaults to the rule's; an escalation passes `escalateTo`).
   * The requester and "anyone in the conversation" are left out.
   */
  async peopleToTell(
    approval: Pick<ApprovalRecord, 'requesterId' | 'rule' | 'teamId'>,
    approvers: readonly Approver[] = approval.rule.approvers,
  ): Promise<string[]> {
    return namedDeciders(
      { approvers: [...approvers] },
      approval.requesterId,
      this.#deps.adminUserIds,
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
    delegation: Delegation,
    groupMembers: ReadonlyMap<string, ReadonlySet<string>>,
  ): boolean {
    return mayDecide(rule, requesterId, {
      userId: delegation.delegatorId,
      isAdmin: this.isAdmin(delegation.delegatorId),
      inConversation: false,
      groupMembers,
    }).ok;
  }
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
