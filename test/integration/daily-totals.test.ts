import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { waitBucket } from '../../src/approvals/wait-buckets.js';
import { type AuditInput, auditEvent } from '../../src/audit/audit-event.js';
import { EARLY_END_KINDS, readUsagePayload, USAGE_END_KIND } from '../../src/audit/usage.js';
import { readNumber, readOptionalString, readString } from '../../src/db/sql/columns.js';
import { audit, count, rows } from '../../src/db/sql/program.js';
import type { SqlDatabase } from '../../src/db/sql/sql-database.js';
import { runEvents, seedApproval } from '../support/audit-seed.js';
import { REPO_ROOT } from '../support/bot-process.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';

const DAY = 86_400_000;
const at = (iso: string) => Date.parse(iso);

/** The daily totals as the database keeps them, without the rows whose count fell to 0, in one order. */
async function storedTotals(db: SqlDatabase) {
  return db.read(function* () {
    const requests = yield* rows(sql`select team_id, day, tool_name, status, requests as n from approval_days
      where requests <> 0`);
    const waits = yield* rows(sql`select team_id, day, tool_name, bucket, decided as n from approval_wait_days
      where decided <> 0`);
    const deadlines = yield* rows(sql`select team_id, day, kind, events as n from deadline_days`);
    const usage = yield* rows(sql`select team_id, day, series, series_key, runs, unrecorded, prompt_tokens,
      completion_tokens from run_usage_days`);
    return sorted({
      requests: requests.map((r) => [
        r.team_id,
        readNumber(r, 'day'),
        r.tool_name,
        r.status,
        readNumber(r, 'n'),
      ]),
      waits: waits.map((r) => [
        r.team_id,
        readNumber(r, 'day'),
        r.tool_name,
        readNumber(r, 'bucket'),
        readNumber(r, 'n'),
      ]),
      deadlines: deadlines.map((r) => [r.team_id, readNumber(r, 'day'), r.kind, readNumber(r, 'n')]),
      usage: usage.map((r) => [
        r.team_id,
        readNumber(r, 'day'),
        r.series,
        r.series_key,
        readNumber(r, 'runs'),
        readNumber(r, 'unrecorded'),
        readNumber(r, 'prompt_tokens'),
        readNumber(r, 'completion_tokens'),
      ]),
    });
  });
}

/**
 * The same totals computed here from the requests and the audit log one row at a time, with the rules the
 * charts used before the totals existed (src/audit/usage.ts for the usage): what the triggers must agree with.
 */
async function totalsFromRows(db: SqlDatabase) {
  return db.read(function* () {
    const approvals = yield* rows(
      sql`select team_id, tool_name, status, created_at, decided_at from approvals`,
    );
    const events = yield* rows(sql`select seq, at, actor, kind, team_id, run_id, payload from audit_events
      order by seq`);
    const add = (map: Map<string, number[]>, key: unknown[], values: number[]) => {
      const id = JSON.stringify(key);
      const sum = map.get(id) ?? values.map(() => 0);
      map.set(
        id,
        sum.map((v, i) => v + (values[i] ?? 0)),
      );
    };
    const requests = new Map<string, number[]>();
    const waits = new Map<string, number[]>();
    for (const a of approvals) {
      const day = Math.floor(readNumber(a, 'created_at') / DAY);
      add(requests, [a.team_id, day, a.tool_name, a.status], [1]);
      const decidedAt = a.decided_at === null ? null : readNumber(a, 'decided_at');
      if (decidedAt !== null)
        add(waits, [a.team_id, day, a.tool_name, waitBucket(decidedAt - readNumber(a, 'created_at'))], [1]);
    }
    const deadlines = new Map<string, number[]>();
    const usage = new Map<string, number[]>();
    const parse = (text: string): Record<string, unknown> => {
      try {
        const value: unknown = JSON.parse(text);
        return value !== null && typeof value === 'object' && !Array.isArray(value)
          ? (value as Record<string, unknown>)
          : {};
      } catch {
        return {};
      }
    };
    for (const e of events) {
      const teamId = readOptionalString(e, 'team_id');
      const runId = readOptionalString(e, 'run_id');
      const kind = readString(e, 'kind');
      const day = Math.floor(readNumber(e, 'at') / DAY);
      const payload = readString(e, 'payload');
      if (teamId === null) continue;
      if (kind === 'approval.expired' || kind === 'approval.escalated')
        add(deadlines, [teamId, day, kind], [1]);
      const ends =
        kind === USAGE_END_KIND || (EARLY_END_KINDS.includes(kind as never) && payload.includes('"usage":'));
      if (!ends || runId === null) continue;
      const counts = readUsagePayload(parse(payload));
      // The totals keep whole tokens: a fractional count is rounded, run by run.
      const figures = [
        1,
        counts.recorded ? 0 : 1,
        Math.round(counts.promptTokens),
        Math.round(counts.completionTokens),
      ];
      const started = events.find((s) => s.run_id === runId && s.kind === 'run.started');
      add(usage, [teamId, day, 'person', started ? readString(started, 'actor') : ''], figures);
      const tools = new Set<string>();
      for (const t of events)
        if (t.run_id === runId && t.kind === 'tool.finished') {
          const tool = parse(readString(t, 'payload')).tool;
          if (typeof tool === 'string') tools.add(tool);
        }
      for (const tool of tools.size > 0 ? tools : ['']) add(usage, [teamId, day, 'tool', tool], figures);
    }
    const flat = (map: Map<string, number[]>) =>
      [...map].map(([key, values]) => [...(JSON.parse(key) as unknown[]), ...values]);
    return sorted({
      requests: flat(requests).filter((r) => r.at(-1) !== 0),
      waits: flat(waits),
      deadlines: flat(deadlines),
      usage: flat(usage),
    });
  });
}

function sorted<T extends Record<string, unknown[][]>>(totals: T): T {
  const order = (a: unknown[], b: unknown[]) => JSON.stringify(a).localeCompare(JSON.stringify(b));
  return Object.fromEntries(Object.entries(totals).map(([k, v]) => [k, [...v].sort(order)])) as T;
}

/** A run's end as an older or another server's bot may have written it: the usage missing or not numbers. */
const end = (runId: string, kind: string, payload: Record<string, unknown>, when: number, teamId = 'T1') =>
  auditEvent(kind as AuditInput['kind'], {
    at: when,
    teamId,
    conversationId: `conv_${runId}`,
    runId,
    payload,
  });

/** Requests made, decided, run, expired and moved through every status, and runs ended every way. */
async function writeEverything(db: SqlDatabase) {
  const base = at('2026-03-01T10:00:00Z');
  const ids: string[] = [];
  for (let i = 0; i < 24; i += 1) {
    const status = (['pending', 'approved', 'rejected', 'expired'] as const)[i % 4] ?? 'pending';
    ids.push(
      await seedApproval(db, {
        teamId: i % 5 === 0 ? 'T2' : 'T1',
        toolName: ['create_note', 'delete_note', 'post_message'][i % 3] ?? 'create_note',
        status,
        createdAt: base + i * 7 * 3_600_000,
        ...(status === 'pending'
          ? {}
          : { decidedBy: 'UADMIN', decidedAt: base + i * 7 * 3_600_000 + i * 37_000 }),
      }),
    );
  }
  const [first, second, third, fourth] = ids;
  await db.write(function* () {
    // A pending request approved, then run: its status moves three times, its decision time once.
    yield* count(
      sql`update approvals set status = 'approved', decided_at = created_at + 123456 where id = ${first}`,
    );
    yield* count(sql`update approvals set status = 'executing' where id = ${first}`);
    yield* count(sql`update approvals set status = 'executed', result = 'ok' where id = ${first}`);
    // An update that changes neither.
    yield* count(sql`update approvals set status = status, decided_at = decided_at where id = ${second}`);
    // A decision time written again (it never is by the bot, but the totals follow whatever is stored).
    yield* count(sql`update approvals set decided_at = decided_at + 999999 where id = ${third}`);
    yield* count(sql`update approvals set status = 'cancelled', decided_at = null where id = ${fourth}`);
    yield* audit([
      ...runEvents('run_a', {
        user: 'U1',
        tools: ['create_note', 'create_note'],
        prompt: 10,
        completion: 5,
        at: base,
      }),
      ...runEvents('run_b', {
        user: 'U2',
        tools: ['create_note', 'delete_note'],
        prompt: 7,
        completion: 1,
        at: base + DAY,
      }),
      ...runEvents('run_c', { user: 'U1', prompt: 3, completion: 4, at: base + DAY }),
      ...runEvents('run_t2', { user: 'U9', teamId: 'T2', prompt: 100, completion: 0, at: base }),
      end(
        'run_stopped',
        'run.cancelled',
        { usage: { promptTokens: 2, completionTokens: 2 } },
        base + 2 * DAY,
      ),
      end('run_old_stop', 'run.failed', { reason: 'limit' }, base + 2 * DAY),
      end('run_no_usage', 'run.completed', { turns: 1 }, base + 2 * DAY),
      end(
        'run_bad',
        'run.completed',
        { usage: { promptTokens: -1, completionTokens: 'many' } },
        base + 2 * DAY,
      ),
      end('run_half', 'run.completed', { usage: { promptTokens: 8 } }, base + 2 * DAY),
      end('run_list', 'run.completed', { usage: [1, 2] }, base + 2 * DAY),
      // Counts past 2^53 - 1 are no counts (and must not fail the write); fractions are rounded.
      end(
        'run_huge',
        'run.completed',
        { usage: { promptTokens: 1e20, completionTokens: 1 } },
        base + 2 * DAY,
      ),
      end('run_half_tokens', 'run.completed', { usage: { promptTokens: 1.5, completionTokens: 2.5 } }, base),
      // Only a lower-case "usage" key is a usage (as the reader and both engines read it).
      end('run_shouting', 'run.failed', { USAGE: { promptTokens: 1, completionTokens: 1 } }, base),
      // A tool named by something other than a string is no tool name.
      auditEvent('tool.finished', {
        at: base,
        teamId: 'T1',
        runId: 'run_numbers',
        payload: { tool: 5, ok: true },
      }),
      auditEvent('tool.finished', {
        at: base,
        teamId: 'T1',
        runId: 'run_numbers',
        payload: { tool: '5', ok: true },
      }),
      end('run_numbers', 'run.completed', { usage: { promptTokens: 1, completionTokens: 1 } }, base),
      auditEvent('approval.expired', { at: base, teamId: 'T1', payload: {} }),
      auditEvent('approval.expired', { at: base + 60_000, teamId: 'T1', payload: {} }),
      auditEvent('approval.escalated', { at: base + DAY, teamId: 'T2', payload: {} }),
      auditEvent('approval.escalated', { at: base + DAY, payload: {} }),
    ]);
  });
  // A payload that is not JSON at all, as a hand-edited or foreign row might hold: counted as unrecorded, and
  // it does not fail the write that stores it.
  await db.write(function* () {
    const [head] = yield* rows(sql`select seq, hash from audit_events order by seq desc limit 1`);
    const seq = head ? readNumber(head, 'seq') + 1 : 1;
    yield* count(sql`insert into audit_events (seq, at, actor, kind, team_id, run_id, payload, prev_hash, hash,
        chain_version, payload_digest)
      values (${seq}, ${base + 3 * DAY}, 'bot', 'run.completed', 'T1', 'run_garbled', 'not json {', ${head ? readString(head, 'hash') : ''},
        'x', 2, 'x')`);
  });
}

/** The statements of the migration that made the totals which fill them from the rows already stored. */
function backfillStatements(kind: 'sqlite' | 'postgres'): string[] {
  const folder = join(REPO_ROOT, 'drizzle', kind);
  const journal = JSON.parse(readFileSync(join(folder, 'meta', '_journal.json'), 'utf8')) as {
    entries: { tag: string }[];
  };
  const tag = journal.entries.find((e) => e.tag.endsWith('daily-totals'))?.tag;
  const statements = readFileSync(join(folder, `${tag}.sql`), 'utf8').split('--> statement-breakpoint');
  const from = statements.findIndex((s) => s.includes('The totals of what is already stored'));
  return statements.slice(from);
}

describe.each(DATABASE_KINDS)('the daily totals on %s', (kind) => {
  let t: TestStores;
  let db: SqlDatabase;
  beforeEach(async () => {
    t = await openTestStores(kind);
    db = t.db;
    await writeEverything(db);
  });
  afterEach(async () => t.close());

  it('are kept by every write, whatever writes it, and agree with the rows they count', async () => {
    const expected = await totalsFromRows(db);
    expect(expected.requests.length).toBeGreaterThan(10);
    expect(expected.usage.length).toBeGreaterThan(8);
    expect(await storedTotals(db)).toEqual(expected);
  });

  it('are filled by their migration from what the database already held, exactly as the triggers keep them', async () => {
    const kept = await storedTotals(db);
    const statements = backfillStatements(kind);
    expect(statements).toHaveLength(4);
    await db.write(function* () {
      for (const table of ['approval_days', 'approval_wait_days', 'deadline_days', 'run_usage_days'])
        yield* count(sql.raw(`delete from ${table}`));
      for (const statement of statements) yield* count(sql.raw(statement));
    });
    expect(await storedTotals(db)).toEqual(kept);
  });
});
