/**
 * Where a decision's time goes on PostgreSQL: `npx tsx bench/decision-anatomy.ts [decisions]`. On a fresh
 * database of the bench's server (embedded, durable defaults; or BENCH_DATABASE_URL) it decides paused runs'
 * approvals one at a time through the real service and prints: the statements of one decision with the
 * `EXPLAIN (ANALYZE, BUFFERS)` of each (run in a savepoint that is rolled back, then the statement itself),
 * round trips and commits per decision, the mean time of each statement, how long the audit chain's head
 * is held, and the same decisions with `synchronous_commit` off (what the commit's flush to disk costs).
 */
import { loadavg } from 'node:os';
import pg from 'pg';
import { ApprovalService } from '../src/approvals/approval-service.js';
import { Deciders } from '../src/approvals/deciders.js';
import { createApprovalStore } from '../src/db/approval-store.js';
import { openPostgresDatabase } from '../src/db/postgres/postgres-database.js';
import { withAdmin } from '../test/support/postgres-admin.js';
import { createBenchDatabase, setDatabaseDefault, startBenchPostgres } from './postgres.js';
import { createPostgresStoreFixture, storeContext } from './store-fixture.js';

interface Sent {
  text: string;
  ms: number;
}

const sent: Sent[] = [];
let explain = false;
const plans: string[] = [];
const query = pg.Client.prototype.query as (this: pg.Client, ...args: unknown[]) => Promise<pg.QueryResult>;
pg.Client.prototype.query = async function (this: pg.Client, ...args: unknown[]) {
  const text = typeof args[0] === 'string' ? args[0] : '';
  const client = this as pg.Client & { inTransaction?: boolean };
  if (text === 'begin') client.inTransaction = true;
  if (text === 'commit' || text === 'rollback') client.inTransaction = false;
  if (explain && text && !/^(begin|commit|rollback)$/.test(text)) {
    if (client.inTransaction) await query.call(this, 'savepoint anatomy');
    const plan = await query.call(this, `explain (analyze, buffers, costs off) ${text}`, args[1]);
    if (client.inTransaction) await query.call(this, 'rollback to savepoint anatomy');
    plans.push(`${text.replace(/\s+/g, ' ')}\n${plan.rows.map((r) => `    ${r['QUERY PLAN']}`).join('\n')}`);
  }
  const started = performance.now();
  const result = await query.apply(this, args);
  sent.push({ text: text.replace(/\s+/g, ' ').slice(0, 70), ms: performance.now() - started });
  return result;
} as typeof pg.Client.prototype.query;

const decisions = Number(process.argv[2] ?? 200);
const server = await startBenchPostgres();
const database = await createBenchDatabase(server.url);
try {
  await setDatabaseDefault(database.url, 'synchronous_commit', 'off');
  const fixture = await createPostgresStoreFixture(database.url);
  const approvals: string[] = [];
  for (let i = 0; i < 2 * decisions + 1; i++) {
    const { thread, conversationId } = await fixture.seedThread(0);
    approvals.push((await fixture.pause(thread, conversationId)).approval.id);
  }
  // Statistics as autovacuum would have gathered them (ANATOMY_ANALYZE=0: without, as right after a burst).
  if (process.env.ANATOMY_ANALYZE !== '0') await withAdmin(database.url, (admin) => admin.query('analyze'));
  await fixture.close();

  const decide = async (ids: string[], synchronousCommit: 'on' | 'off') => {
    await setDatabaseDefault(database.url, 'synchronous_commit', synchronousCommit === 'on' ? null : 'off');
    const ctx = storeContext(await openPostgresDatabase(database.url, { poolSize: 10 }));
    const service = new ApprovalService({
      store: createApprovalStore(ctx),
      clock: ctx.clock,
      deciders: new Deciders({ clock: ctx.clock, adminUserIds: [] }),
    });
    const one = (approvalId: string) =>
      service.decide({
        approvalId,
        userId: 'U2',
        teamId: 'T1',
        channelId: 'C1',
        vote: 'approve',
        reason: null,
      });
    await one(ids[0] ?? ''); // warm: connection open, first plans
    sent.length = 0;
    const headHeld: number[] = [];
    const started = performance.now();
    for (const id of ids.slice(1)) {
      const before = sent.length;
      const t0 = performance.now();
      const result = await one(id);
      if (!result.ok) throw new Error(`not decided: ${result.kind}`);
      const mine = sent.slice(before);
      const lockAt = mine.findIndex((s) => s.text.includes('pg_advisory_xact_lock'));
      const elapsed = performance.now() - t0;
      // From sending the head's lock to the commit's answer: the head is held for these statements.
      if (lockAt >= 0) headHeld.push(mine.slice(lockAt).reduce((n, s) => n + s.ms, 0));
      void elapsed;
    }
    const seconds = (performance.now() - started) / 1000;
    await ctx.db.close();
    return { seconds, count: ids.length - 1, statements: [...sent], headHeld };
  };

  // One decision with the plan of each statement.
  explain = true;
  const ctx = storeContext(await openPostgresDatabase(database.url, { poolSize: 2 }));
  const service = new ApprovalService({
    store: createApprovalStore(ctx),
    clock: ctx.clock,
    deciders: new Deciders({ clock: ctx.clock, adminUserIds: [] }),
  });
  await service.decide({
    approvalId: approvals.pop() ?? '',
    userId: 'U2',
    teamId: 'T1',
    channelId: 'C1',
    vote: 'approve',
    reason: null,
  });
  await ctx.db.close();
  explain = false;
  console.log(
    `# The statements of one decision, each with EXPLAIN (ANALYZE, BUFFERS)\n\n${plans.join('\n\n')}\n`,
  );

  for (const [label, ids, mode] of [
    ['synchronous_commit on (the default)', approvals.slice(0, decisions), 'on'],
    ['synchronous_commit off (for comparison only)', approvals.slice(decisions), 'off'],
  ] as const) {
    const load = loadavg()[0]?.toFixed(2);
    const { seconds, count, statements, headHeld } = await decide([...ids], mode);
    const byText = new Map<string, number[]>();
    for (const s of statements) byText.set(s.text, [...(byText.get(s.text) ?? []), s.ms]);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
    console.log(`# ${label}, ${count} decisions, load average ${load}`);
    console.log(
      `decisions/s ${(count / seconds).toFixed(1)}; ${(1000 * (seconds / count)).toFixed(2)} ms each; round trips per decision ${(statements.length / count).toFixed(2)}; commits per decision ${(statements.filter((s) => s.text === 'commit').length / count).toFixed(2)}`,
    );
    console.log(
      `audit head held per decision (lock sent to commit answered): mean ${mean(headHeld).toFixed(2)} ms`,
    );
    for (const [text, ms] of byText)
      console.log(`  ${(ms.length / count).toFixed(2)}×  mean ${mean(ms).toFixed(3)} ms  ${text}`);
    console.log('');
  }
} finally {
  await database.drop();
  await server.stop();
}
