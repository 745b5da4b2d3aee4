import type { ApprovalRule, Approver } from './approval.js';
import { decidingRule } from './policy.js';
import type { GroupDirectory } from './ports.js';

/** At most this many people get a request by direct message; the others are named in the thread. */
export const MAX_DIRECT_MESSAGES = 25;

/**
 * Members of the user groups (`S…`) among `approvers`, in `teamId`'s workspace; without a directory, none
 * (nobody matches a group).
 */
export async function groupMembersOf(
  approvers: readonly Approver[],
  groups: GroupDirectory | undefined,
  teamId: string,
): Promise<Map<string, ReadonlySet<string>>> {
  const members = new Map<string, ReadonlySet<string>>();
  if (!groups) return members;
  for (const group of approvers.filter((approver) => approver.startsWith('S')))
    members.set(group, await groups.members(group, teamId));
  return members;
}

/**
 * The people a rule names who may decide a request, in the rule's order, each once: listed users, members of
 * listed user groups, and admins. The requester is left out (they asked; they see the thread), and so is
 * "anyone in the conversation", which names nobody in particular. Pure.
 */
export function namedDeciders(
  rule: Pick<ApprovalRule, 'approvers'>,
  requesterId: string,
  adminUserIds: readonly string[],
  groupMembers: ReadonlyMap<string, ReadonlySet<string>>,
): string[] {
  const people = new Set<string>();
  for (const approver of rule.approvers) {
    if (approver === 'admins') for (const admin of adminUserIds) people.add(admin);
    else if (approver === 'conversation' || approver === 'requester') continue;
    else if (approver.startsWith('S'))
      for (const member of groupMembers.get(approver) ?? []) people.add(member);
    else people.add(approver);
  }
  people.delete(requesterId);
  return [...people];
}

/** Someone a reminder calls on to decide. */
export type DeciderMention =
  | { kind: 'user'; userId: string }
  | { kind: 'group'; groupId: string }
  | { kind: 'conversation' }
  /** The rule names admins, but none may decide this request (none are configured, or only the requester). */
  | { kind: 'admins' };

/**
 * Whom a reminder of a pending request calls on, in the rule's order (with `escalateTo` once escalated), each
 * once: each admin and listed user who may decide it (the requester only where self-approval is allowed),
 * each named group, and "anyone in the conversation". Pure.
 */
export function deciderMentions(
  rule: ApprovalRule,
  requesterId: string,
  adminUserIds: readonly string[],
): DeciderMention[] {
  const deciding = decidingRule(rule);
  const mayDecide = (userId: string) => deciding.allowSelfApproval || userId !== requesterId;
  const mentions = new Map<string, DeciderMention>();
  const addUser = (userId: string) => mentions.set(`user:${userId}`, { kind: 'user', userId });
  for (const approver of deciding.approvers) {
    if (approver === 'admins') {
      const admins = adminUserIds.filter(mayDecide);
      if (admins.length === 0) mentions.set('admins', { kind: 'admins' });
      for (const admin of admins) addUser(admin);
    } else if (approver === 'conversation') mentions.set('conversation', { kind: 'conversation' });
    else if (approver === 'requester') {
      if (deciding.allowSelfApproval) addUser(requesterId);
    } else if (approver.startsWith('S'))
      mentions.set(`group:${approver}`, { kind: 'group', groupId: approver });
    else if (mayDecide(approver)) addUser(approver);
  }
  return [...mentions.values()];
}

/**
 * Whether nobody at all can decide a request under its rule (with `escalateTo` once escalated): it names only
 * admins while none are configured (or the only ones are the requester, who may not approve their own), and
 * perhaps the requester where self-approval is not allowed. Such a request waits until an operator adds an
 * admin. Pure.
 */
export function nobodyCanDecide(
  rule: ApprovalRule,
  requesterId: string,
  adminUserIds: readonly string[],
): boolean {
  const mentions = deciderMentions(rule, requesterId, adminUserIds);
  return mentions.every((mention) => mention.kind === 'admins');
}

/**
 * The tools, of `toolNames`, whose requests nobody could decide with these admins: each needs approval and
 * only admins may decide it (as the built-in `delete_note` and `post_message` with `ADMIN_USER_IDS` empty). Pure.
 */
export function undecidableTools(
  policy: { forTool(toolName: string): { requireApproval: boolean | undefined; rule: ApprovalRule } },
  toolNames: readonly string[],
  adminUserIds: readonly string[],
): string[] {
  // The requester is nobody in particular here: a rule that lets them approve their own request is decidable.
  return toolNames.filter((tool) => {
    const { requireApproval, rule } = policy.forTool(tool);
    return requireApproval !== false && nobodyCanDecide(rule, '', adminUserIds);
  });
}

/** What start-up and `policy check` say about such tools: the problem, and how to fix it. */
export function undecidableWarning(tools: readonly string[]): string {
  return `ADMIN_USER_IDS is empty, so nobody can decide requests to run ${tools.join(', ')} (only admins may): they would wait until an admin is configured. Add your Slack user ID (and other admins') to ADMIN_USER_IDS, or let others decide them in the policy file.`;
}
