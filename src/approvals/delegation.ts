import { type AuditInput, auditEvent } from '../audit/audit-event.js';
import type { Approver } from './approval.js';
import { approverMatches } from './policy.js';

/** Bob may decide what Alice may decide until `until` (exclusive). */
export interface Delegation {
  id: string;
  teamId: string;
  delegatorId: string;
  delegateId: string;
  until: number;
  createdAt: number;
}

/** Delegations: granted and ended with `/approvals`, read when someone decides. */
export interface DelegationStore {
  /** Records a delegation with its `delegation.granted` event. */
  grant(delegation: Delegation): Promise<void>;
  /** Delegations to `delegateId` in force at `now`, oldest first. */
  activeFor(teamId: string, delegateId: string, now: number): Promise<Delegation[]>;
  /** Delegations in force at `now` that `userId` gave or received. */
  involving(teamId: string, userId: string, now: number): Promise<Delegation[]>;
  /** Ends the delegations in force from `delegatorId` to `delegateId`, each with a `delegation.ended` event. */
  end(input: {
    teamId: string;
    delegatorId: string;
    delegateId: string;
    endedBy: string;
    at: number;
  }): Promise<Delegation[]>;
}

const DAY_MS = 86_400_000;

/**
 * `until:2026-12-24` covers that whole day (UTC): the delegation ends when the next day begins. Undefined for
 * anything but a real date.
 */
export function delegationEnd(date: string): number | undefined {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(date);
  if (!match) return undefined;
  const start = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  if (new Date(start).toISOString().slice(0, 10) !== date) return undefined;
  return start + DAY_MS;
}

/**
 * Whether `userId` may decide some tool under the policy (named as a user, a member of a named group, or an
 * admin where admins decide): only such people may delegate. Pure.
 */
export function maySomeoneDecide(
  named: readonly Approver[],
  userId: string,
  isAdmin: boolean,
  groupMembers: ReadonlyMap<string, ReadonlySet<string>>,
): boolean {
  const decider = { userId, isAdmin, inConversation: false, groupMembers };
  // "Anyone in the conversation" and "the requester" name nobody in particular: nothing to hand on.
  return named.some(
    (approver) =>
      approver !== 'conversation' && approver !== 'requester' && approverMatches(approver, '', decider),
  );
}

export function delegationEvent(
  kind: 'delegation.granted' | 'delegation.ended',
  delegation: Delegation,
  actor: string,
  at: number,
): AuditInput {
  return auditEvent(kind, {
    at,
    actor,
    teamId: delegation.teamId,
    payload: {
      delegationId: delegation.id,
      delegator: delegation.delegatorId,
      delegate: delegation.delegateId,
      until: new Date(delegation.until).toISOString(),
    },
  });
}
