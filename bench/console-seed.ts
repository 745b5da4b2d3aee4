import type { ApprovalStatus } from '../src/approvals/approval.js';
import { builtInPolicy } from '../src/approvals/policy.js';
import { type AuditInput, type AuditKind, auditEvent } from '../src/audit/audit-event.js';
import type { DatabaseConfig } from '../src/config.js';
import { openDatabase } from '../src/db/open-database.js';
import type { SqlDatabase } from '../src/db/sql/sql-database.js';
import { silentLogger } from '../src/logger.js';
import { approvalId } from '../test/support/audit-seed.js';
import { type BulkRequest, writeBulk } from './bulk-writer.js';

export interface ConsoleSeedSize {
  /** Requests left pending (each with its `approval.requested` event). */
  pending: number;
  /** Audit events in all, at least those of the pending requests; the rest tell the story of decided ones. */
  events: number;
}

export interface ConsoleSeed {
  /** The pending requests' ids, oldest first. */
  pendingIds: string[];
  /** Decided requests written to reach `events`. */
  decided: number;
  events: number;
  seconds: number;
}

/** The workspace of the fake Slack: the console's sessions belong to it. */
const TEAM = 'T1';
const TOOLS = ['create_note', 'delete_note', 'send_email', 'run_query'];
const REQUESTERS = 30;
const DECIDERS = 8;
const CHANNELS = 12;
/** The rule stored with each request: the built-in policy's for its tool. */
const RULES = new Map(TOOLS.map((tool) => [tool, JSON.stringify(builtInPolicy().forTool(tool).rule)]));
const DAY = 86_400_000;

/** One request to write: its row and the audit events that tell its story, in order. */
interface SeedRequest {
  id: string;
  n: number;
  status: ApprovalStatus;
  tool: string;
  requester: string;
  decider: string | null;
  channel: string;
  createdAt: number;
  decidedAt: number | null;
  args: Record<string, unknown>;
  events: AuditInput[];
}

function request(n: number, status: ApprovalStatus, when: number): SeedRequest {
  // Whole milliseconds, as the bot's clock gives them.
  const createdAt = Math.floor(when);
  const id = approvalId();
  const tool = TOOLS[n % TOOLS.length] ?? 'create_note';
  const requester = `U${String(1000 + (n % REQUESTERS))}`;
  const decider = status === 'pending' ? null : `UDEC${n % DECIDERS}`;
  const channel = `C${String(100 + (n % CHANNELS))}`;
  const decidedAt = decider ? createdAt + 30_000 + ((n * 7919) % 3_600_000) : null;
  const args = { text: `note ${n}: quarterly figures for team ${n % 17}`, to: `person${n % 41}@example.com` };
  const scope = { teamId: TEAM, conversationId: `conv_${id}`, runId: `run_${id}`, approvalId: id };
  const at = (offset: number) => createdAt + offset;
  const events: AuditInput[] = [
    auditEvent('approval.requested', {
      at: at(0),
      actor: requester,
      ...scope,
      payload: { tool, arguments: args },
    }),
  ];
  if (decider && decidedAt !== null) {
    const approved = status === 'approved';
    const follow: [AuditKind, number, string, Record<string, unknown>][] = [
      ['approval.card_posted', 200, 'system', { tool, channel }],
      [
        approved ? 'approval.approved' : 'approval.rejected',
        decidedAt - createdAt,
        decider,
        { tool, surface: 'slack' },
      ],
      ...(approved
        ? ([
            ['tool.started', decidedAt - createdAt + 5, 'system', { tool }],
            ['tool.finished', decidedAt - createdAt + 40, 'system', { tool, ok: true }],
          ] as [AuditKind, number, string, Record<string, unknown>][])
        : []),
      ['run.completed', decidedAt - createdAt + 900, 'system', {}],
    ];
    for (const [kind, offset, actor, payload] of follow)
      events.push(auditEvent(kind, { at: at(offset), actor, ...scope, payload }));
  }
  return { id, n, status, tool, requester, decider, channel, createdAt, decidedAt, args, events };
}

/** The request's conversation, its row, the decider's vote and its audit events, as the bot records them. */
function rowsOf(r: SeedRequest): BulkRequest {
  const conversation = `conv_${r.id}`;
  return {
    conversation: {
      id: conversation,
      team_id: TEAM,
      channel_id: r.channel,
      thread_ts: `${Math.floor(r.createdAt / 1000)}.${String(r.n % 1e6).padStart(6, '0')}`,
      surface: 'slack',
      created_at: r.createdAt,
    },
    approval: {
      id: r.id,
      run_id: `run_${r.id}`,
      conversation_id: conversation,
      team_id: TEAM,
      turn: 1,
      call_id: `call_${r.id}`,
      tool_name: r.tool,
      arguments: JSON.stringify(r.args),
      arguments_hash: 'x',
      status: r.status,
      requester_id: r.requester,
      rule: RULES.get(r.tool) ?? '{}',
      decided_by: r.decider,
      decided_at: r.decidedAt,
      channel_id: r.channel,
      thread_ts: '1700000000.000100',
      message_ts: '1700000000.000200',
      result: r.status === 'approved' ? 'ok' : null,
      created_at: r.createdAt,
      updated_at: r.decidedAt ?? r.createdAt,
    },
    vote:
      r.decider && r.decidedAt !== null
        ? {
            approval_id: r.id,
            user_id: r.decider,
            vote: r.status === 'rejected' ? 'reject' : 'approve',
            created_at: r.decidedAt,
          }
        : null,
    events: r.events,
  };
}

/** Writes `requests` in large transactions, the audit chain kept valid (bulk-writer.ts). */
function writeAll(db: SqlDatabase, requests: Iterable<SeedRequest>): Promise<number> {
  return writeBulk(
    db,
    (function* () {
      for (const r of requests) yield rowsOf(r);
    })(),
  );
}

/**
 * Fills a new database (migrated on open) with the history the console bench reads: decided requests over
 * the last 90 days, oldest first, until `size.events` audit events in all, then `size.pending` pending ones
 * from the last day. Rows go in by multi-row statements in large transactions, the hash chain computed as the
 * bot computes it, so it verifies as the bot's own does.
 */
export async function seedConsoleDatabase(
  where: DatabaseConfig,
  size: ConsoleSeedSize,
  now = Date.now(),
): Promise<ConsoleSeed> {
  const started = performance.now();
  const db = await openDatabase(where, silentLogger);
  try {
    const historyEvents = Math.max(0, size.events - size.pending);
    // About 5.5 events per decided request (4 for a rejection, 6 for an approval that ran its tool).
    const decidedCount = Math.floor(historyEvents / 5.5);
    const span = 90 * DAY;
    let decided = 0;
    let historyWritten = 0;
    function* history(): Generator<SeedRequest> {
      for (let n = 0; n < decidedCount; n++) {
        const r = request(
          n,
          n % 5 === 4 ? 'rejected' : 'approved',
          now - span - DAY + (n * span) / decidedCount,
        );
        if (historyWritten + r.events.length > historyEvents) return;
        historyWritten += r.events.length;
        decided += 1;
        yield r;
      }
    }
    let events = await writeAll(db, history());
    const pending = Array.from({ length: size.pending }, (_, n) =>
      request(decidedCount + n, 'pending', now - DAY + (n * DAY) / Math.max(size.pending, 1)),
    );
    events += await writeAll(db, pending);
    return {
      pendingIds: pending.map((r) => r.id),
      decided,
      events,
      seconds: (performance.now() - started) / 1000,
    };
  } finally {
    await db.close();
  }
}
