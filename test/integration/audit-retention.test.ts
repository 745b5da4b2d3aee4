import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'drizzle-orm';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { builtInPolicy } from '../../src/approvals/policy.js';
import { auditEvent } from '../../src/audit/audit-event.js';
import { verifyChain } from '../../src/audit/verify-chain.js';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { createRetentionStore } from '../../src/db/retention-store.js';
import { audit, count, rows } from '../../src/db/sql/program.js';
import type { SqlDatabase } from '../../src/db/sql/sql-database.js';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';
import { randomId } from '../../src/ids.js';
import { REPO_ROOT } from '../support/bot-process.js';
import { DATABASE_KINDS, openTestStores, type TestStores } from '../support/test-database.js';

const DAY = 86_400_000;
const RULE = JSON.stringify(builtInPolicy().forTool('create_note').rule);
const NOW = Date.now();
const OLD = NOW - 100 * DAY;

/** Audit events of the chain's first version, written before retention existed: frozen, never regenerated. */
const V1_EVENTS = JSON.parse(
  readFileSync(join(REPO_ROOT, 'test', 'fixtures', 'audit-chain', 'v1-events.json'), 'utf8'),
) as Record<string, string | number | null>[];

async function insertV1(db: SqlDatabase): Promise<void> {
  await db.write(function* () {
    for (const e of V1_EVENTS) {
      yield* count(sql`insert into audit_events
        (seq, at, actor, kind, team_id, conversation_id, run_id, approval_id, payload, prev_hash, hash)
        values (${e.seq}, ${e.at}, ${e.actor}, ${e.kind}, ${e.team_id}, ${e.conversation_id}, ${e.run_id},
          ${e.approval_id}, ${e.payload}, ${e.prev_hash}, ${e.hash})`);
    }
  });
}

/** A run of `status` in its own conversation, with history, an approval and its audit events, at `at`. */
async function seedRun(
  db: SqlDatabase,
  id: string,
  status: 'completed' | 'paused',
  at: number,
): Promise<void> {
  const approvalStatus = status === 'paused' ? 'pending' : 'executed';
  const scope = { teamId: 'T1', conversationId: `conv_${id}`, runId: id, approvalId: `apr_${id}` };
  await db.write(function* () {
    yield* count(sql`insert into conversations (id, team_id, channel_id, thread_ts, surface, created_at)
      values (${scope.conversationId}, 'T1', 'C1', ${`1700000000.${id}`}, 'slack', ${at})`);
    yield* count(sql`insert into runs (id, conversation_id, status, state, schema_version, turn, requester_id,
        created_at, updated_at)
      values (${id}, ${scope.conversationId}, ${status}, '{}', 1, 1, 'U1', ${at}, ${at})`);
    yield* count(sql`insert into conversation_items (conversation_id, run_id, turn, kind, data, created_at)
      values (${scope.conversationId}, ${id}, 1, 'user_message', ${JSON.stringify({ text: `secret plan ${id}` })}, ${at})`);
    yield* count(sql`insert into approvals (id, run_id, conversation_id, team_id, turn, call_id, tool_name,
        arguments, arguments_hash, status, requester_id, rule, reason, channel_id, thread_ts, result, created_at,
        updated_at)
      values (${scope.approvalId}, ${id}, ${scope.conversationId}, 'T1', 1, 'call_1', 'create_note',
        ${JSON.stringify({ text: `note of ${id}` })}, 'h', ${approvalStatus}, 'U1', ${RULE}, 'because',
        'C1', ${`1700000000.${id}`}, ${status === 'paused' ? null : 'Saved.'}, ${at}, ${at})`);
    yield* audit([
      auditEvent('run.started', {
        at,
        actor: 'U1',
        ...scope,
        approvalId: null,
        payload: { channelId: 'C1' },
      }),
      auditEvent('approval.requested', {
        at,
        actor: 'U1',
        ...scope,
        payload: { tool: 'create_note', arguments: { text: `note of ${id}` }, rule: { approvers: ['U2'] } },
      }),
      ...(status === 'completed'
        ? [
            auditEvent('approval.approved', {
              at,
              actor: 'U2',
              ...scope,
              payload: { tool: 'create_note', reason: 'fine by me' },
            }),
            auditEvent('run.completed', { at, ...scope, approvalId: null, payload: { turns: 2 } }),
          ]
        : []),
    ]);
  });
}

describe.each(DATABASE_KINDS)('retention that keeps the proof, on %s', (kind) => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores(kind);
    await insertV1(t.db);
    await seedRun(t.db, 'run_old', 'completed', OLD);
    await seedRun(t.db, 'run_waiting', 'paused', OLD);
    await seedRun(t.db, 'run_new', 'completed', NOW - DAY);
  });
  afterEach(async () => t.close());

  const chain = () => t.stores.auditQueries.chain();
  const payloadOf = async (kindName: string, runId: string) =>
    (await chain()).find((e) => e.kind === kindName && e.runId === runId)?.payload;

  it('version 1 events (frozen fixture) and version 2 events verify together', async () => {
    const events = await chain();
    expect(events.slice(0, 8).every((e) => e.version === 1)).toBe(true);
    expect(
      events.slice(8).every((e) => e.version === 2 && /^[0-9a-f]{64}$/.test(e.payloadDigest ?? '')),
    ).toBe(true);
    expect(verifyChain(events)).toMatchObject({ ok: true, count: 8 + 10 });
  });

  it('prunes content older than the limit, never a run waiting for a decision, and verify still passes', async () => {
    const report = await t.stores.retention.prune(NOW - 90 * DAY, { at: NOW, limit: 'RETENTION_DAYS=90' });
    expect(report).toEqual({
      before: NOW - 90 * DAY,
      limit: 'RETENTION_DAYS=90',
      events: 2,
      keptVersion1: 8,
      approvals: 1,
      items: 1,
      activeRuns: 1,
    });
    const events = await chain();
    expect(verifyChain(events)).toMatchObject({ ok: true, count: 19 });
    expect(events.at(-1)).toMatchObject({
      kind: 'audit.pruned',
      payload: { limit: 'RETENTION_DAYS=90', events: 2 },
    });

    const requested = await payloadOf('approval.requested', 'run_old');
    expect(requested).toMatchObject({
      tool: 'create_note',
      rule: { approvers: ['U2'] },
      arguments: { $digest: expect.stringMatching(/^[0-9a-f]{64}$/) },
      $pruned: { at: new Date(NOW).toISOString(), limit: 'RETENTION_DAYS=90', keys: ['arguments'] },
    });
    expect(JSON.stringify(requested)).not.toContain('note of run_old');
    expect(await payloadOf('approval.approved', 'run_old')).toMatchObject({
      reason: { $digest: expect.any(String) },
    });
    // The run waiting for a decision and the recent run keep everything.
    expect(await payloadOf('approval.requested', 'run_waiting')).toMatchObject({
      arguments: { text: 'note of run_waiting' },
    });
    expect(await payloadOf('approval.requested', 'run_new')).toMatchObject({
      arguments: { text: 'note of run_new' },
    });
    const items = await t.db.read(function* () {
      return yield* rows(sql`select conversation_id from conversation_items order by id`);
    });
    expect(items.map((i) => i.conversation_id)).toEqual(['conv_run_waiting', 'conv_run_new']);
    const left = await t.stores.auditQueries.detail('T1', 'apr_run_old');
    expect(left?.approval).toMatchObject({ result: null, reason: null });
    expect(left?.approval.arguments).toContain('"$pruned"');
    expect((await t.stores.auditQueries.detail('T1', 'apr_run_waiting'))?.approval.arguments).toContain(
      'note of run_waiting',
    );

    // Pruning again changes nothing more.
    const again = await t.stores.retention.prune(NOW - 90 * DAY, { at: NOW + 1, limit: 'RETENTION_DAYS=90' });
    expect(again).toMatchObject({ events: 0, approvals: 0, items: 0 });
    expect(verifyChain(await chain()).ok).toBe(true);
  });
});

describe.each(DATABASE_KINDS)('a prune of many rows, on %s', (kind) => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores(kind);
    for (let i = 0; i < 5; i++) await seedRun(t.db, `run_old${i}`, 'completed', OLD + i);
    await seedRun(t.db, 'run_waiting', 'paused', OLD);
  });
  afterEach(async () => t.close());

  /** History items left, approvals and audit events pruned: what each transaction of a prune changes. */
  function* tally() {
    const [found] = yield* rows(sql`select
      (select count(*) from conversation_items) as items,
      (select count(*) from approvals where arguments like ${'{"$pruned":%'}) as approvals,
      (select count(*) from audit_events where payload like ${'%"$pruned":%'}) as events`);
    return [Number(found?.items), Number(found?.approvals), Number(found?.events)];
  }

  it('is done in batches, each a transaction of its own, and the chain still verifies', async () => {
    // Each write transaction of the prune, with what it changed: rows deleted or pruned, per table.
    const changes: number[][] = [];
    const watched: SqlDatabase = {
      ...t.db,
      dialect: t.db.dialect,
      read: (program) => t.db.read(program),
      write: (program) =>
        t.db.write(function* () {
          const before = yield* tally();
          const result = yield* program();
          const after = yield* tally();
          changes.push(after.map((n, i) => Math.abs(n - (before[i] ?? 0))));
          return result;
        }),
    };
    const retention = createRetentionStore(
      {
        db: watched,
        clock: { now: () => NOW },
        newId: randomId,
        owner: 'test',
        leaseMs: 30_000,
        ownerIsGone: () => false,
      },
      2,
    );
    // Between two batches the prune gives way (yieldToIntake in the bot and the command line): told how long the
    // batch before took.
    const paced: number[] = [];
    const report = await retention.prune(
      NOW - 90 * DAY,
      { at: NOW, limit: 'RETENTION_DAYS=90' },
      async (ms) => {
        paced.push(ms);
      },
    );
    expect(report).toMatchObject({ items: 5, approvals: 5, events: 10, activeRuns: 1 });
    // After every full batch of each kind (2 + 2 + 5), never after the last of a kind.
    expect(paced).toHaveLength(9);
    expect(paced.every((ms) => ms >= 0)).toBe(true);
    // The last transaction writes the audit.pruned event; every one before changes at most 2 rows of a table.
    const batches = changes.slice(0, -1);
    expect(batches.every((changed) => changed.every((n) => n <= 2))).toBe(true);
    expect(batches.filter(([items]) => (items ?? 0) > 0)).toHaveLength(3);
    expect(batches.filter(([, approvals]) => (approvals ?? 0) > 0)).toHaveLength(3);
    expect(batches.filter(([, , events]) => (events ?? 0) > 0)).toHaveLength(5);
    expect(verifyChain(await t.stores.auditQueries.chain())).toMatchObject({ ok: true });
    // The run waiting for a decision keeps its history and arguments.
    expect(await t.db.read(tally)).toEqual([1, 5, 10]);
  });
});

describe.each(DATABASE_KINDS)('the append-only guard with retention, on %s', (kind) => {
  let t: TestStores;
  beforeEach(async () => {
    t = await openTestStores(kind);
    await insertV1(t.db);
    await seedRun(t.db, 'run_old', 'completed', OLD);
  });
  afterEach(async () => t.close());
  const change = (statement: ReturnType<typeof sql>) =>
    t.db.write(function* () {
      return yield* count(statement);
    });

  it('lets only the payload of a version 2 event change; nothing is deleted', async () => {
    await expect(change(sql`update audit_events set payload = '{}' where seq = 2`)).rejects.toThrow(
      /append-only/,
    );
    await expect(change(sql`update audit_events set actor = 'U9' where seq = 10`)).rejects.toThrow(
      /append-only/,
    );
    await expect(change(sql`update audit_events set chain_version = 1 where seq = 10`)).rejects.toThrow(
      /append-only/,
    );
    await expect(change(sql`delete from audit_events where seq = 10`)).rejects.toThrow(/append-only/);
    expect(await change(sql`update audit_events set payload = payload where seq = 10`)).toBe(1);
  });
});

describe('npm run audit -- prune, then verify', () => {
  let dir: string;
  let dbPath: string;
  const cli = async (...argv: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runAuditCli(
      argv,
      { DATABASE_PATH: dbPath },
      { out: (l) => out.push(l), err: (l) => err.push(l), now: () => NOW },
    );
    return { code, out, err };
  };
  const tamper = (statement: string) => {
    const raw = new Database(dbPath);
    raw.exec('DROP TRIGGER IF EXISTS audit_events_no_update; DROP TRIGGER IF EXISTS audit_events_no_delete;');
    raw.exec(statement);
    raw.close();
  };
  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'audit-prune-'));
    dbPath = join(dir, 'bot.db');
    const db = openSqliteDatabase(dbPath);
    await insertV1(db);
    await seedRun(db, 'run_old', 'completed', OLD);
    await seedRun(db, 'run_waiting', 'paused', OLD);
    await db.close();
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('prune --before 90d, verify passes; a pruned event tampered with fails verify', async () => {
    const pruned = await cli('prune', '--before', '90d');
    expect(pruned.err).toEqual([]);
    expect(pruned.code).toBe(0);
    expect(pruned.out[0]).toContain(
      '1 history items deleted, 1 approvals and 2 audit events pruned to digests.',
    );
    expect(pruned.out[0]).toContain('1 runs waiting for a decision (or running) were left alone.');
    expect(pruned.out[0]).toContain('8 audit events written before chain version 2 keep their content');
    const verified = await cli('verify');
    expect(verified.out[0]).toMatch(/^15 events, chain intact/);
    expect(verified.code).toBe(0);
    const listed = await cli('list', '--format', 'jsonl', '--tool', 'create_note');
    const requested = listed.out
      .map((l) => JSON.parse(l))
      .find((e) => e.kind === 'approval.requested' && e.run === 'run_old');
    expect(requested.payload.$pruned).toMatchObject({ limit: '--before 90d', keys: ['arguments'] });

    // Someone swaps the digest of the removed arguments: the payload no longer matches what the hash covers.
    tamper(
      `UPDATE audit_events SET payload = replace(payload, '"$digest":"', '"$digest":"0') WHERE kind = 'approval.requested' AND run_id = 'run_old'`,
    );
    const broken = await cli('verify');
    expect(broken.code).toBe(1);
    expect(broken.err[0]).toMatch(/event \d+ was edited: its payload no longer matches its digest/);
  });

  it('a pruned event whose other fields are edited fails verify too', async () => {
    expect((await cli('prune', '--before', '90d')).code).toBe(0);
    tamper(`UPDATE audit_events SET actor = 'U9' WHERE kind = 'approval.approved' AND run_id = 'run_old'`);
    const broken = await cli('verify');
    expect(broken.code).toBe(1);
    expect(broken.err[0]).toMatch(/event \d+ was edited: its contents no longer match its hash/);
  });

  it('explains a missing or future limit', async () => {
    expect((await cli('prune')).err[0]).toContain('prune needs --before');
    expect((await cli('prune', '--before', '2999-01-01')).code).toBe(2);
  });
});
