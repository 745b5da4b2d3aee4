import { and, asc, desc, eq, exists, gte, isNotNull, lte, ne, or, type SQL, sql } from 'drizzle-orm';
import { z } from 'zod';
import { APPROVAL_STATUSES } from '../approvals/approval.js';
import type { StoredAuditEvent } from '../audit/audit-event.js';
import { type AuditEventRow, type AuditQueries, median } from '../audit/audit-queries.js';
import { toApprovalRecord } from './approval-rows.js';
import type { Db } from './database.js';
import { approvals, approvalVotes, auditEvents } from './schema.js';

type EventRow = typeof auditEvents.$inferSelect;

const statusSchema = z.enum(APPROVAL_STATUSES);

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** The stored payload as an object; anything else (a tampered row) is kept raw so verification flags it. */
function toStoredEvent(row: EventRow): StoredAuditEvent {
  let parsed: unknown;
  try {
    parsed = JSON.parse(row.payload);
  } catch {
    parsed = undefined;
  }
  // A plain object check, not a full schema: the payload is opaque JSON and this runs once per event of the log.
  const payload = isRecord(parsed) ? parsed : { unreadable: row.payload };
  return { ...row, payload };
}

/** Approvals live here until decided; the latest decision comes first in history. */
const decisionTime = sql`coalesce(${approvals.decidedAt}, ${approvals.updatedAt})`;

export function createAuditQueryStore(db: Db): AuditQueries {
  const eventTool = sql<
    string | null
  >`coalesce(${approvals.toolName}, json_extract(${auditEvents.payload}, '$.tool'))`;
  const page = <T>(items: T[], total: number) => ({ items, total });
  const count = (where: SQL | undefined) =>
    db.select({ n: sql<number>`count(*)` }).from(approvals).where(where).get()?.n ?? 0;

  return {
    chain() {
      return db.select().from(auditEvents).orderBy(asc(auditEvents.seq)).all().map(toStoredEvent);
    },

    events(filter) {
      const where = and(
        filter.since === undefined ? undefined : gte(auditEvents.at, filter.since),
        filter.until === undefined ? undefined : lte(auditEvents.at, filter.until),
        filter.teamId === undefined ? undefined : eq(auditEvents.teamId, filter.teamId),
        filter.userId === undefined
          ? undefined
          : or(eq(auditEvents.actor, filter.userId), eq(approvals.requesterId, filter.userId)),
        filter.tool === undefined ? undefined : eq(eventTool, filter.tool),
        filter.status === undefined ? undefined : eq(approvals.status, filter.status),
      );
      return db
        .select({ event: auditEvents, tool: eventTool, status: approvals.status })
        .from(auditEvents)
        .leftJoin(approvals, eq(approvals.id, auditEvents.approvalId))
        .where(where)
        .orderBy(asc(auditEvents.seq))
        .all()
        .map(
          (row): AuditEventRow => ({
            ...toStoredEvent(row.event),
            tool: typeof row.tool === 'string' ? row.tool : null,
            approvalStatus: row.status === null ? null : statusSchema.parse(row.status),
          }),
        );
    },

    pending(teamId, { limit, offset }) {
      const where = and(eq(approvals.teamId, teamId), eq(approvals.status, 'pending'));
      const rows = db
        .select()
        .from(approvals)
        .where(where)
        .orderBy(asc(approvals.createdAt), asc(approvals.id))
        .limit(limit)
        .offset(offset)
        .all();
      return page(rows.map(toApprovalRecord), count(where));
    },

    history({ teamId, userId, tool, since, limit, offset }) {
      const voted = (user: string) =>
        exists(
          db
            .select({ one: sql`1` })
            .from(approvalVotes)
            .where(and(eq(approvalVotes.approvalId, approvals.id), eq(approvalVotes.userId, user))),
        );
      const where = and(
        eq(approvals.teamId, teamId),
        ne(approvals.status, 'pending'),
        userId === undefined ? undefined : or(eq(approvals.requesterId, userId), voted(userId)),
        tool === undefined ? undefined : eq(approvals.toolName, tool),
        since === undefined ? undefined : gte(approvals.createdAt, since),
      );
      const rows = db
        .select()
        .from(approvals)
        .where(where)
        .orderBy(desc(decisionTime), desc(approvals.id))
        .limit(limit)
        .offset(offset)
        .all();
      return page(rows.map(toApprovalRecord), count(where));
    },

    detail(teamId, approvalId) {
      const row = db
        .select()
        .from(approvals)
        .where(and(eq(approvals.id, approvalId), eq(approvals.teamId, teamId)))
        .get();
      if (!row) return undefined;
      const votes = db
        .select()
        .from(approvalVotes)
        .where(eq(approvalVotes.approvalId, approvalId))
        .orderBy(asc(approvalVotes.createdAt))
        .all()
        .map((vote) => ({ userId: vote.userId, vote: vote.vote, at: vote.createdAt }));
      const events = db
        .select()
        .from(auditEvents)
        .where(eq(auditEvents.approvalId, approvalId))
        .orderBy(asc(auditEvents.seq))
        .all()
        .map(toStoredEvent);
      return { approval: toApprovalRecord(row), votes, events };
    },

    stats(teamId, since) {
      const scope = and(
        eq(approvals.teamId, teamId),
        since === undefined ? undefined : gte(approvals.createdAt, since),
      );
      const counts = db
        .select({ tool: approvals.toolName, status: approvals.status, count: sql<number>`count(*)` })
        .from(approvals)
        .where(scope)
        .groupBy(approvals.toolName, approvals.status)
        .orderBy(asc(approvals.toolName), asc(approvals.status))
        .all();
      const waits = db
        .select({ wait: sql<number>`${approvals.decidedAt} - ${approvals.createdAt}` })
        .from(approvals)
        .where(and(scope, isNotNull(approvals.decidedAt)))
        .all()
        .map((row) => row.wait);
      return { counts, medianDecisionMs: median(waits), decided: waits.length };
    },

    requestsBy(teamId, userId, limit) {
      return db
        .select()
        .from(approvals)
        .where(and(eq(approvals.teamId, teamId), eq(approvals.requesterId, userId)))
        .orderBy(desc(approvals.createdAt), desc(approvals.id))
        .limit(limit)
        .all()
        .map(toApprovalRecord);
    },
  };
}
