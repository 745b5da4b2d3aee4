import { redactValue } from '../redact.js';

/** What happened, in the words admins filter by. */
export type AuditKind =
  | 'run.started'
  | 'run.paused'
  | 'run.resumed'
  | 'run.completed'
  | 'run.failed'
  | 'run.cancelled'
  | 'run.stop_refused'
  | 'approval.requested'
  | 'approval.reviewed'
  | 'approval.approved'
  | 'approval.rejected'
  | 'approval.refused'
  | 'approval.edited'
  | 'approval.expired'
  | 'approval.reminded'
  | 'approval.escalated'
  | 'approval.cancelled'
  | 'approval.limited'
  | 'approval.card_posted'
  | 'approval.break_glass'
  | 'approval.break_glass_acknowledged'
  | 'standing.granted'
  | 'standing.revoked'
  | 'tool.started'
  | 'tool.finished'
  | 'tool.outcome_unknown'
  | 'tool.not_run'
  | 'policy.loaded'
  | 'delegation.granted'
  | 'delegation.used'
  | 'delegation.ended'
  | 'audit.pruned'
  | 'console.link_issued'
  | 'console.signed_in'
  | 'console.signed_out'
  | 'console.refused'
  | 'console.sessions_revoked'
  | 'installation.added'
  | 'installation.removed'
  | 'team.admin_added'
  | 'team.admin_removed'
  | 'installation.token_refreshed'
  | 'delivery.dropped';

/** An audit event before it is chained; the store adds sequence, previous hash and hash. */
export interface AuditInput {
  at: number;
  actor: string;
  kind: AuditKind;
  teamId: string | null;
  /** The Enterprise Grid organisation of the team, when the work or the installation carries one. */
  enterpriseId: string | null;
  conversationId: string | null;
  runId: string | null;
  approvalId: string | null;
  payload: Record<string, unknown>;
}

export const SYSTEM_ACTOR = 'system';

/** Builds an event with secrets redacted from its payload. */
export function auditEvent(
  kind: AuditKind,
  fields: Partial<Omit<AuditInput, 'kind' | 'payload'>> & { at: number; payload?: Record<string, unknown> },
): AuditInput {
  const payload = redactValue(fields.payload ?? {});
  return {
    at: fields.at,
    actor: fields.actor ?? SYSTEM_ACTOR,
    kind,
    teamId: fields.teamId ?? null,
    enterpriseId: fields.enterpriseId ?? null,
    conversationId: fields.conversationId ?? null,
    runId: fields.runId ?? null,
    approvalId: fields.approvalId ?? null,
    payload: payload !== null && typeof payload === 'object' && !Array.isArray(payload) ? { ...payload } : {},
  };
}

/** An audit event as stored: chained, with its sequence number, the previous event's hash and its own. */
export interface StoredAuditEvent extends Omit<AuditInput, 'kind' | 'enterpriseId'> {
  /** Read back from storage, so any string: an edited kind must still be reported, not rejected. */
  kind: string;
  /** Null outside Enterprise Grid; absent in a database the bot has not migrated since events carried it. */
  enterpriseId?: string | null;
  seq: number;
  prevHash: string;
  hash: string;
  /** The chain version the event was written under (src/audit/hash-chain.ts); 1 when the column is absent. */
  version?: number;
  /** Version 2: the digest of the payload, which the hash covers instead of the payload. */
  payloadDigest?: string | null;
}
