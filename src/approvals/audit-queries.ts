import type { StoredAuditEvent } from '../audit/audit-event.js';
import type { UsageTotals } from '../audit/usage.js';
import type { ApprovalRecord, ApprovalStatus } from './approval.js';
import type { TrendRows, TrendWindow } from './approval-trends.js';

/** Filters of `npm run audit -- list|export`; every field narrows the result. Times are epoch milliseconds. */
export interface AuditEventFilter {
  since?: number;
  until?: number;
  /** The actor, or the requester of the approval the event concerns. */
  userId?: string;
  /** The tool of the approval, or the `tool` named in the payload. */
  tool?: string;
  /** The current status of the approval the event concerns. */
  status?: ApprovalStatus;
  teamId?: string;
  /** The Enterprise Grid organisation the event's team belongs to (every workspace of it). */
  enterpriseId?: string;
  /** The channel of the event's conversation, or of its approval's card. */
  channel?: string;
  /** The event's kind, exactly (`approval.escalated`). */
  kind?: string;
  /**
   * A substring of the payload as stored (JSON text, secrets already redacted, pruned content gone), ignoring
   * the case of letters A to Z.
   */
  text?: string;
}

/** Where a page of the audit log starts, newest or oldest first, by sequence number (never an offset). */
export interface AuditPageRequest {
  limit: number;
  order: 'newest' | 'oldest';
  /** The last sequence number seen: the page holds the events past it in `order`. */
  cursor?: number;
}

export interface AuditEventPage {
  items: AuditEventRow[];
  /** The sequence number to ask the next page from; null on the last page. */
  nextCursor: number | null;
}

/** One run's events in order, and the requests it made (whoever may see one of them may see the run). */
export interface RunTrail {
  events: AuditEventRow[];
  approvals: ApprovalRecord[];
}

/** An audit event with what admins filter by: the tool and the current status of its approval. */
export interface AuditEventRow extends StoredAuditEvent {
  tool: string | null;
  approvalStatus: ApprovalStatus | null;
}

export interface Page<T> {
  items: T[];
  /** Matches in all, of which `items` is one page. */
  total: number;
}

export interface PageRequest {
  limit: number;
  offset: number;
}

export interface HistoryQuery extends PageRequest {
  teamId: string;
  /** The requester or anyone who voted. */
  userId?: string;
  tool?: string;
  since?: number;
}

/**
 * Where a page of decided requests starts: past the request `id`, which left `pending` at `at` (its decision
 * time), in the list's order (latest decision first, then id). Still valid when requests are decided meanwhile.
 */
export interface DecisionPosition {
  at: number;
  id: string;
}

export interface DecidedQuery {
  teamId: string;
  /** The requester or anyone who voted. */
  userId?: string;
  limit: number;
  after?: DecisionPosition;
}

export interface DecidedPage {
  items: ApprovalRecord[];
  /** Matches in all, of which `items` is one page. */
  total: number;
  /** Where the next page starts; null on the last page. */
  next: DecisionPosition | null;
}

export interface ApprovalVoteRecord {
  userId: string;
  vote: 'approve' | 'reject';
  at: number;
}

/** One request in full: the approval, every vote and who cast it, and its audit trail. */
export interface ApprovalDetail {
  approval: ApprovalRecord;
  votes: ApprovalVoteRecord[];
  events: StoredAuditEvent[];
}

export interface ApprovalStats {
  /** Requests per tool and current status. */
  counts: { tool: string; status: ApprovalStatus; count: number }[];
  /** Median time from request to decision over decided requests, null when none was decided. */
  medianDecisionMs: number | null;
  decided: number;
  /** The model's tokens over the runs completed in the same window. */
  usage: UsageTotals;
}

/*
 * Read-only questions about approvals and the audit log, for the slash command, App Home and the command line,
 * split by who asks them. Implemented over either database by `src/db/audit-query-store.ts`.
 */

/** The audit log itself, for `npm run audit` (list, export, verify) and policy replays. */
export interface AuditLogQueries {
  /**
   * The chain in sequence order, for verification: all of it, or `limit` events after `afterSeq` (to read a
   * long log a batch at a time).
   */
  chain(range?: { afterSeq: number; limit: number }): Promise<StoredAuditEvent[]>;
  events(filter: AuditEventFilter): Promise<AuditEventRow[]>;
  /** One page of a workspace's events that pass `filter`, fast however long the log (an index on team and seq). */
  eventPage(filter: AuditEventFilter & { teamId: string }, page: AuditPageRequest): Promise<AuditEventPage>;
  /**
   * One page of the whole log (every workspace) that passes `filter`, by sequence number: what
   * `npm run audit -- export` streams, a page at a time, so a long log is never held in memory.
   */
  logPage(filter: AuditEventFilter, page: AuditPageRequest): Promise<AuditEventPage>;
  /** A run's events of this workspace, oldest first; undefined when it has none here. */
  runTrail(teamId: string, runId: string): Promise<RunTrail | undefined>;
}

/** Lists of requests, as the slash command and App Home show them. */
export interface ApprovalLists {
  pending(teamId: string, page: PageRequest): Promise<Page<ApprovalRecord>>;
  /** Requests that are no longer pending, latest decision first. */
  history(query: HistoryQuery): Promise<Page<ApprovalRecord>>;
  /** The same list a page at a time by position (never an offset): as fast deep in it as at its start. */
  decided(query: DecidedQuery): Promise<DecidedPage>;
  /** A person's own requests, latest first. */
  requestsBy(teamId: string, userId: string, limit: number): Promise<ApprovalRecord[]>;
}

/** One request in full, and figures over a workspace's requests. */
export interface ApprovalReports {
  /** One request of this workspace, or undefined (unknown id, or another workspace's). */
  detail(teamId: string, approvalId: string): Promise<ApprovalDetail | undefined>;
  stats(teamId: string, since?: number): Promise<ApprovalStats>;
  /** The figures of the console's charts over a bounded window of one workspace, grouped by UTC day. */
  trends(window: TrendWindow): Promise<TrendRows>;
}

/** Every audit query, as the database answers them in one store. */
export type AuditQueries = AuditLogQueries & ApprovalLists & ApprovalReports;
