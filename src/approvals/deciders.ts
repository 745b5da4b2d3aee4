import type { ApprovalRule } from './approval.js';

/** At most this many people get a request by direct message; the others are named in the thread. */
export const MAX_DIRECT_MESSAGES = 25;

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
