import { randomBytes } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { ApprovalStatus } from '../../src/approvals/approval.js';
import { builtInPolicy } from '../../src/approvals/policy.js';
import { type AuditInput, auditEvent } from '../../src/audit/audit-event.js';
import type { DatabaseConfig } from '../../src/config.js';
import { openDatabase } from '../../src/db/open-database.js';
import { audit, count } from '../../src/db/sql/program.js';
import type { SqlDatabase } from '../../src/db/sql/sql-database.js';
import { silentLogger } from '../../src/logger.js';

export interface SeedApproval {
  id?: string;
  teamId?: string;
  toolName?: string;
  arguments?: Record<string, unknown>;
  status?: ApprovalStatus;
  requesterId?: string;
  approvers?: string[];
  /** Other fields of the stored rule (an escalation: `escalateTo` and `escalatedAt`). */
  rule?: Record<string, unknown>;
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
 * the way the bot records them, on either database; for tests that need many requests without driving the model.
 */
export function seedApproval(db: SqlDatabase, seed: SeedApproval = {}): Promise<string> {
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
  const rule = JSON.stringify({
    ...builtInPolicy().forTool(toolName).rule,
    ...(seed.approvers ? { approvers: seed.approvers } : {}),
    ...seed.rule,
  });
  return db.write(function* () {
    // Its conversation too: the deadline scheduler acts on requests of the conversations its surface serves.
    yield* count(sql`insert into conversations (id, team_id, channel_id, thread_ts, surface, created_at)
      values (${scope.conversationId}, ${teamId}, ${seed.channelId ?? 'C1'}, ${`1700000000.${id.slice(-6)}`}, 'slack',
        ${createdAt}) on conflict do nothing`);
    yield* count(sql`insert into approvals (id, run_id, conversation_id, team_id, turn, call_id, tool_name,
        arguments, arguments_hash, status, requester_id, rule, decided_by, decided_at, channel_id, thread_ts,
        message_ts, result, created_at, updated_at)
      values (${id}, ${scope.runId}, ${scope.conversationId}, ${teamId}, 1, ${`call_${id}`}, ${toolName}, ${args},
        'x', ${status}, ${requesterId}, ${rule}, ${decided ? (seed.decidedBy ?? null) : null}, ${decidedAt},
        ${seed.channelId ?? 'C1'}, '1700000000.000100',
        ${seed.messageTs === undefined ? '1700000000.000200' : seed.messageTs}, ${seed.result ?? null},
        ${createdAt}, ${decidedAt ?? createdAt})`);
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
      yield* count(sql`insert into approval_votes (approval_id, user_id, vote, created_at)
        values (${id}, ${seed.decidedBy}, ${vote}, ${decidedAt})`);
      const kind = vote === 'approve' ? 'approval.approved' : 'approval.rejected';
      events.push(
        auditEvent(kind, { at: decidedAt, actor: seed.decidedBy, ...scope, payload: { tool: toolName } }),
      );
    }
    yield* audit(events);
    return id;
  });
}

/** Seeds requests on a running bot's database, beside the bot, through a connection of its own. */
export async function seedApprovals(where: DatabaseConfig, ...seeds: SeedApproval[]): Promise<string[]> {
  const database = await openDatabase(where, silentLogger);
  try {
    const ids: string[] = [];
    for (const seed of seeds) ids.push(await seedApproval(database, seed));
    return ids;
  } finally {
    await database.close();
  }
}

/** A run as the bot records it: started by `user`, the tools it called, ended at `at` with its token usage. */
export function runEvents(
  runId: string,
  run: { user: string; teamId?: string; tools?: string[]; prompt: number; completion: number; at: number },
): AuditInput[] {
  const scope = { teamId: run.teamId ?? 'T1', conversationId: `conv_${runId}`, runId };
  return [
    auditEvent('run.started', { at: run.at - 1000, actor: run.user, ...scope, payload: { channelId: 'C1' } }),
    ...(run.tools ?? []).map((tool) =>
      auditEvent('tool.finished', { at: run.at - 500, ...scope, payload: { tool, ok: true } }),
    ),
    auditEvent('run.completed', {
      at: run.at,
      ...scope,
      payload: {
        turns: 1,
        usage: {
          promptTokens: run.prompt,
          completionTokens: run.completion,
          totalTokens: run.prompt + run.completion,
        },
      },
    }),
  ];
}

/** Appends audit events to a running bot's database, through a connection of its own. */
export async function seedAuditEvents(where: DatabaseConfig, events: AuditInput[]): Promise<void> {
  const database = await openDatabase(where, silentLogger);
  try {
    await database.write(function* () {
      yield* audit(events);
    });
  } finally {
    await database.close();
  }
}
