import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditEventFilter, AuditPageRequest } from '../../src/approvals/audit-queries.js';
import { auditEvent } from '../../src/audit/audit-event.js';
import { createAuditQueryStore } from '../../src/db/audit-query-store.js';
import { audit, forwardSteps, rows, type Step } from '../../src/db/sql/program.js';
import type { SqlDatabase } from '../../src/db/sql/sql-database.js';
import { seedApproval } from '../support/audit-seed.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';

const T0 = Date.parse('2026-05-01T10:00:00Z');
const MINUTE = 60_000;

/**
 * The console's reading of the audit log (a workspace's events a page at a time, each filter, a run's trail)
 * does the same on SQLite and on PostgreSQL.
 */
describe.each(DATABASE_KINDS)('audit log pages on %s', (kind) => {
  let s: TestStores;
  let ids: { approved: string; rejected: string; pending: string; other: string };
  beforeEach(async () => {
    s = await openTestStores(kind);
    const approved = await seedApproval(s.db, {
      createdAt: T0,
      status: 'approved',
      decidedBy: 'UA',
      channelId: 'C1',
    });
    const rejected = await seedApproval(s.db, {
      createdAt: T0 + 10 * MINUTE,
      status: 'rejected',
      decidedBy: 'UB',
      toolName: 'send_email',
      channelId: 'C2',
      arguments: { subject: 'Quarterly PLAN' },
    });
    const pending = await seedApproval(s.db, { createdAt: T0 + 20 * MINUTE, requesterId: 'U2' });
    // Another workspace, with the same words, channel and people.
    const other = await seedApproval(s.db, {
      teamId: 'T2',
      createdAt: T0 + 30 * MINUTE,
      status: 'rejected',
      decidedBy: 'UB',
      arguments: { subject: 'quarterly plan' },
    });
    await s.db.write(function* () {
      yield* audit([auditEvent('run.started', { at: T0 + 40 * MINUTE, actor: 'U3', teamId: 'T1' })]);
    });
    ids = { approved, rejected, pending, other };
  });
  afterEach(async () => s.close());

  const queries = () => s.stores.auditQueries;
  const page = (filter: AuditEventFilter, request: Partial<AuditPageRequest> = {}) =>
    queries().eventPage({ teamId: 'T1', ...filter }, { limit: 100, order: 'newest', ...request });
  const kindsOf = async (filter: AuditEventFilter) =>
    (await page(filter)).items.map((e) => `${e.kind}:${e.approvalId ?? '-'}`);

  it('pages newest or oldest first by sequence number return every event of the workspace exactly once', async () => {
    const all = (await queries().events({ teamId: 'T1' })).map((e) => e.seq);
    expect(all).toHaveLength(6);
    for (const order of ['newest', 'oldest'] as const) {
      const seen: number[] = [];
      let cursor: number | undefined;
      for (let pages = 0; pages < 10; pages += 1) {
        const next = await page({}, { limit: 4, order, ...(cursor === undefined ? {} : { cursor }) });
        seen.push(...next.items.map((e) => e.seq));
        if (next.nextCursor === null) break;
        cursor = next.nextCursor;
      }
      expect(seen).toEqual(order === 'newest' ? [...all].reverse() : all);
    }
    const exact = await page({}, { limit: 6 });
    expect(exact.nextCursor).toBeNull();
  });

  it('the whole chain reads a batch at a time after a sequence number, every workspace alike', async () => {
    const whole = (await queries().chain()).map((e) => e.seq);
    expect(whole).toHaveLength(8);
    const batches: number[][] = [];
    for (let after = 0; ; ) {
      const batch = (await queries().chain({ afterSeq: after, limit: 4 })).map((e) => e.seq);
      batches.push(batch);
      if (batch.length < 4) break;
      after = batch.at(-1) ?? after;
    }
    expect(batches).toEqual([whole.slice(0, 4), whole.slice(4, 8), []]);
  });

  it('each filter narrows the page, and nothing of another workspace appears', async () => {
    expect(await kindsOf({ tool: 'send_email' })).toEqual([
      `approval.rejected:${ids.rejected}`,
      `approval.requested:${ids.rejected}`,
    ]);
    expect(await kindsOf({ userId: 'U2' })).toEqual([`approval.requested:${ids.pending}`]);
    expect(await kindsOf({ userId: 'UA' })).toEqual([`approval.approved:${ids.approved}`]);
    expect(await kindsOf({ status: 'pending' })).toEqual([`approval.requested:${ids.pending}`]);
    expect(await kindsOf({ channel: 'C2' })).toEqual([
      `approval.rejected:${ids.rejected}`,
      `approval.requested:${ids.rejected}`,
    ]);
    expect(await kindsOf({ kind: 'run.started' })).toEqual(['run.started:-']);
    expect(await kindsOf({ text: 'quarterly plan' })).toEqual([`approval.requested:${ids.rejected}`]);
    expect(await kindsOf({ since: T0 + 15 * MINUTE, until: T0 + 25 * MINUTE })).toEqual([
      `approval.requested:${ids.pending}`,
    ]);
    const everything = await page({}, { limit: 100 });
    expect(everything.items.every((e) => e.teamId === 'T1')).toBe(true);
    const otherTeam = await queries().eventPage(
      { teamId: 'T2', text: 'quarterly' },
      { limit: 10, order: 'newest' },
    );
    expect(otherTeam.items.map((e) => e.approvalId)).toEqual([ids.other]);
  });

  it("a run's trail is its events in order, with its requests, and only in its own workspace", async () => {
    const runId = `run_${ids.rejected}`;
    const trail = await queries().runTrail('T1', runId);
    expect(trail?.events.map((e) => e.kind)).toEqual(['approval.requested', 'approval.rejected']);
    expect(trail?.approvals.map((a) => a.id)).toEqual([ids.rejected]);
    expect(await queries().runTrail('T2', runId)).toBeUndefined();
    expect(await queries().runTrail('T1', 'run_unknown')).toBeUndefined();
  });
});

describe('audit log query plan', () => {
  it("SQLite reads a workspace's page, newest first, along the team and sequence index without sorting", async () => {
    const s = await openTestStores('sqlite');
    try {
      await seedApproval(s.db, { createdAt: T0 });
      const seen: Step[] = [];
      const watched: SqlDatabase = {
        ...s.db,
        read: (program) => s.db.read(() => forwardSteps(program(), (step) => seen.push(step) > 0)),
      };
      await createAuditQueryStore(watched).eventPage(
        { teamId: 'T1', tool: 'create_note', channel: 'C1', text: 'hello' },
        { limit: 50, order: 'newest', cursor: 1000 },
      );
      const query = seen.find((step) => step.op === 'rows');
      if (query?.op !== 'rows') throw new Error('no query was made');
      const plan = (
        await s.db.read(function* () {
          return (yield* rows(sql`explain query plan ${query.query}`)).map((r) => String(r.detail));
        })
      ).join('\n');
      expect(plan).toMatch(
        /SEARCH e USING (COVERING )?INDEX audit_events_team_seq \(team_id=\? AND seq<\?\)/,
      );
      expect(plan).not.toContain('TEMP B-TREE');
    } finally {
      await s.close();
    }
  });
});
