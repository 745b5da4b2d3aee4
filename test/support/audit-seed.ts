import { randomBytes } from 'node:crypto';
import type { ApprovalStatus } from '../../src/approvals/approval.js';
import { builtInPolicy } from '../../src/approvals/policy.js';
import { type AuditInput, auditEvent } from '../../src/audit/audit-event.js';
import { appendAudit } from '../../src/db/audit-writer.js';
import type { Db } from '../../src/db/database.js';
import { approvals, approvalVotes } from '../../src/db/schema.js';

export interface SeedApproval {
  id?: string;
  teamId?: string;
  toolName?: string;
  arguments?: Record<string, unknown>;
  status?: ApprovalStatus;
  requesterId?: string;
  approvers?: string[];
  decidedBy?: string;
  createdAt?: number;
  decidedAt?: number;
  channelId?: string;
  messageTs?: string | null;
  result?: string;
}

/** A valid-looking approval id, as the bot generates them. */
export function approvalId(): string {
  return `apr_${randomBytes(12).toString('hex')}`;
}

/**
 * Inserts an approval row (and, when decided, the decider's vote) plus its request and decision audit events,
 * the way the bot records them; for tests that need many requests without driving the model.
 */
export function seedApproval(db: Db, seed: SeedApproval = {}): string {
  const id = seed.id ?? approvalId();
  const createdAt = seed.createdAt ?? Date.now();
  const status = seed.status ?? 'pending';
  const teamId = seed.teamId ?? 'T1';
  const requesterId = seed.requesterId ?? 'U1';
  const toolName = seed.toolName ?? 'create_note';
  const args = JSON.stringify(seed.arguments ?? { text: 'hello' });
  const decided = status !== 'pending' && seed.decidedBy !== undefined;
  const decidedAt = decided ? (seed.decidedAt ?? createdAt + 60_000) : null;
  const scope = { teamId, conversationId: `conv_${id}`, runId: `run_${id}`, approvalId: id };
  db.transaction((tx) => {
    tx.insert(approvals)
      .values({
        id,
        ...scope,
        turn: 1,
        callId: `call_${id}`,
        toolName,
        arguments: args,
        argumentsHash: 'x',
        status,
        requesterId,
        rule: JSON.stringify({
          ...builtInPolicy().forTool(toolName).rule,
          ...(seed.approvers ? { approvers: seed.approvers } : {}),
        }),
        decidedBy: decided ? (seed.decidedBy ?? null) : null,
        decidedAt,
        channelId: seed.channelId ?? 'C1',
        threadTs: '1700000000.000100',
        messageTs: seed.messageTs === undefined ? '1700000000.000200' : seed.messageTs,
        result: seed.result ?? null,
        createdAt,
        updatedAt: decidedAt ?? createdAt,
      })
      .run();
    const events: AuditInput[] = [
      auditEvent('approval.requested', {
        at: createdAt,
        actor: requesterId,
        ...scope,
        payload: { tool: toolName, arguments: seed.arguments ?? { text: 'hello' } },
      }),
    ];
    if (decided && seed.decidedBy && decidedAt !== null) {
      const vote = status === 'rejected' ? 'reject' : 'approve';
      tx.insert(approvalVotes)
        .values({ approvalId: id, userId: seed.decidedBy, vote, createdAt: decidedAt })
        .run();
      const kind = vote === 'approve' ? 'approval.approved' : 'approval.rejected';
      events.push(
        auditEvent(kind, { at: decidedAt, actor: seed.decidedBy, ...scope, payload: { tool: toolName } }),
      );
    }
    appendAudit(tx, events);
  });
  return id;
}
