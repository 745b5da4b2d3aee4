import { type AuditInput, auditEvent } from '../audit/audit-event.js';
import type { Clock } from '../clock.js';
import type { RunRecord } from './ports.js';

/** The audit scope of a run: its team (and Enterprise Grid organisation), conversation and id. */
export function runScope(run: RunRecord) {
  return {
    teamId: run.teamId,
    enterpriseId: run.enterpriseId ?? null,
    conversationId: run.conversationId,
    runId: run.id,
  };
}

/** An audit event about a run (and optionally one of its approvals), stamped now. */
export function runEvent(
  clock: Clock,
  run: RunRecord,
  kind: AuditInput['kind'],
  payload: Record<string, unknown>,
  approvalId: string | null = null,
  /** Who caused it, when a person did (by default the system). */
  actor?: string,
): AuditInput {
  return auditEvent(kind, {
    at: clock.now(),
    ...runScope(run),
    approvalId,
    payload,
    ...(actor !== undefined ? { actor } : {}),
  });
}

/** Arguments as an object when they parse, else the raw string: the audit log keeps exactly what was asked. */
export function readableArguments(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}
