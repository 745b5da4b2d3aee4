import { type AuditInput, auditEvent } from '../audit/audit-event.js';
import type { ApprovalRecord, ApprovalRule, BreakGlassMark } from './approval.js';
import { approvalScope } from './approval.js';
import { type DecisionPermission, decidingRule, describeApprovers } from './policy.js';

/**
 * Break-glass: an admin approves a request the policy would not let them approve (their own request with
 * self-approval off, or one whose rule does not name admins), with a written justification, and another admin
 * acknowledges it afterwards. The rules are here; `Deciders` applies them to a person, `ApprovalService`
 * records the decision with the same compare-and-set as any other.
 */

/** Shortest justification: a word or two is no account of an emergency. */
export const MIN_JUSTIFICATION_LENGTH = 10;
/** Longest justification (the same as a rejection reason). */
export const MAX_JUSTIFICATION_LENGTH = 500;

export type BreakGlassPermission =
  | { ok: true; overrides: 'self_approval' | 'not_an_approver' }
  /**
   * `not_needed`: the person may decide it as usual; `not_an_admin`: refused like any click they may not make;
   * `forbidden`: the request's rule says `"breakGlass": false`.
   */
  | { ok: false; reason: 'not_needed' | 'forbidden' }
  | { ok: false; reason: 'not_an_admin'; refused: Exclude<DecisionPermission, { ok: true }> };

/**
 * Whether a person whose ordinary right to decide is `permission` may break glass on a request under `rule`:
 * only admins, only where the policy would refuse them, and never where the rule forbids it. Pure.
 */
export function mayBreakGlass(
  rule: Pick<ApprovalRule, 'breakGlass'>,
  permission: DecisionPermission,
  isAdmin: boolean,
): BreakGlassPermission {
  if (permission.ok) return { ok: false, reason: 'not_needed' };
  if (!isAdmin) return { ok: false, reason: 'not_an_admin', refused: permission };
  if (rule.breakGlass === false) return { ok: false, reason: 'forbidden' };
  return { ok: true, overrides: permission.reason };
}

export type AcknowledgePermission =
  | { ok: true }
  | { ok: false; reason: 'not_break_glass' | 'not_an_admin' | 'own' | 'already_acknowledged' };

/** Whether `userId` may acknowledge a request's break-glass approval: another admin, once. Pure. */
export function mayAcknowledge(
  mark: BreakGlassMark | undefined,
  userId: string,
  isAdmin: boolean,
): AcknowledgePermission {
  if (!mark) return { ok: false, reason: 'not_break_glass' };
  if (!isAdmin) return { ok: false, reason: 'not_an_admin' };
  if (mark.by === userId) return { ok: false, reason: 'own' };
  if (mark.acknowledgedBy !== null) return { ok: false, reason: 'already_acknowledged' };
  return { ok: true };
}

/** Why an admin's break glass is refused (a non-admin is refused as for Approve, by the service). */
export function breakGlassRefusal(
  reason: 'not_needed' | 'forbidden' | 'not_plain',
  approval: ApprovalRecord,
): string {
  switch (reason) {
    case 'not_needed':
      return 'You may decide this request as usual: break glass is only for requests the policy would not let you approve.';
    case 'forbidden':
      return `The policy forbids breaking glass on ${approval.toolName} requests. It can be decided by ${describeApprovers(decidingRule(approval.rule))}.`;
    case 'not_plain':
      return 'Breaking glass approves this one call, as it is.';
  }
}

/** The justification as typed, trimmed, or the sentence that says what is wrong with it. */
export function checkJustification(
  text: string,
): { ok: true; text: string } | { ok: false; message: string } {
  const trimmed = text.trim();
  if (trimmed.length < MIN_JUSTIFICATION_LENGTH)
    return {
      ok: false,
      message: `Say why in at least ${MIN_JUSTIFICATION_LENGTH} characters: another admin reviews it.`,
    };
  if (trimmed.length > MAX_JUSTIFICATION_LENGTH)
    return { ok: false, message: `Keep the justification under ${MAX_JUSTIFICATION_LENGTH} characters.` };
  return { ok: true, text: trimmed };
}

/** The event recorded with a break-glass approval, beside `approval.approved` (which carries `breakGlass: true`). */
export function breakGlassEvent(
  approval: ApprovalRecord,
  userId: string,
  glass: { justification: string; overrides: 'self_approval' | 'not_an_approver' },
  at: number,
): AuditInput {
  const { justification, overrides } = glass;
  return auditEvent('approval.break_glass', {
    at,
    actor: userId,
    ...approvalScope(approval),
    payload: {
      tool: approval.toolName,
      callId: approval.callId,
      justification,
      overrides,
      rule: approval.rule,
    },
  });
}

export type AcknowledgeResult =
  | { ok: true; approval: ApprovalRecord }
  | { ok: false; kind: 'not_found' }
  | { ok: false; kind: 'not_allowed'; message: string }
  | { ok: false; kind: 'already_acknowledged'; approval: ApprovalRecord };

/** Break-glass approvals and their acknowledgements, in the database. */
export interface BreakGlassStore {
  get(approvalId: string): Promise<ApprovalRecord | undefined>;
  /**
   * Marks the request's break-glass approval acknowledged by `userId` with a compare-and-set on it being still
   * unacknowledged, and records `audit` in the same transaction; `already_acknowledged` when someone was first.
   */
  acknowledge(input: {
    approvalId: string;
    userId: string;
    at: number;
    audit: AuditInput[];
  }): Promise<{ kind: 'acknowledged' | 'already_acknowledged'; approval: ApprovalRecord }>;
  /** Break-glass approvals nobody acknowledged yet, oldest first (of one workspace when `teamId` is given). */
  unacknowledged(teamId?: string): Promise<ApprovalRecord[]>;
}

/** The sentence that tells a person why they may not acknowledge. */
export function acknowledgeRefusal(
  reason: Exclude<AcknowledgePermission, { ok: true }>['reason'],
  approval: ApprovalRecord,
): string {
  switch (reason) {
    case 'not_break_glass':
    case 'not_an_admin':
      return 'Only another admin can acknowledge a break-glass approval.';
    case 'own':
      return 'You broke glass on this request yourself; another admin must acknowledge it.';
    case 'already_acknowledged':
      return `Already acknowledged by <@${approval.breakGlass?.acknowledgedBy ?? 'someone'}>.`;
  }
}
