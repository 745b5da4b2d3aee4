import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { seedConsoleDatabase } from '../../bench/console-seed.js';
import { BENCHMARK_IDS, runSuite, SMOKE_SIZES } from '../../bench/suite.js';
import { runAuditCli } from '../../src/cli/audit-cli.js';
import { expectPlausible } from './bench-plausible.js';

describe('npm run bench', () => {
  it('runs every benchmark at a tiny size and reports plausible figures', async () => {
    // The PostgreSQL rows use the test run's server (test/support/postgres-server.ts): no second server.
    const results = await runSuite(SMOKE_SIZES, {
      postgresUrl: inject('postgresUrl'),
      only: BENCHMARK_IDS.filter((id) => id !== 'console' && id !== 'context-budget' && id !== 'growth'),
    });
    expect(results.map((r) => r.id)).toEqual([
      'click-ack',
      'turn-overhead',
      'pause-resume',
      'sdk-compare',
      'decisions',
      'memory',
      'startup',
      'tool-output',
    ]);
    for (const result of results) expectPlausible(result);
    const byId = Object.fromEntries(results.map((r) => [r.id, r]));
    // SQLite, then PostgreSQL with 1 process and with 3; targets only for SQLite.
    expect(byId['click-ack']?.rows.map((r) => [r.case, r.metrics.clicks])).toEqual([
      ['1 concurrent', 3],
      ['3 concurrent', 3],
      ['1 concurrent (PostgreSQL, 1 process)', 3],
      ['3 concurrent (PostgreSQL, 1 process)', 3],
      ['1 concurrent (PostgreSQL, 3 processes)', 3],
      ['3 concurrent (PostgreSQL, 3 processes)', 3],
    ]);
    // p99 and p50 against the floor, per SQLite concurrency.
    expect(byId['click-ack']?.targets).toHaveLength(4);
    expect(byId['turn-overhead']?.rows.map((r) => r.metrics.turns)).toEqual([3, 3]);
    // Exactly one decision committed per approval, however many writers raced for it.
    expect(byId.decisions?.rows.map((r) => [r.case, r.metrics.decisions, r.metrics['lost races']])).toEqual([
      ['1 writer', 6, 0],
      ['3 writers', 6, 12],
      ['1 writer (PostgreSQL)', 6, 0],
      ['3 writers (PostgreSQL)', 6, 12],
    ]);
    // The SDK's state grows with the conversation; ours does not copy history.
    const sdk = byId['sdk-compare']?.rows.map((r) => r.metrics) ?? [];
    expect(sdk[1]?.['sdk bytes']).toBeGreaterThan(sdk[0]?.['sdk bytes'] ?? 0);
    expect(sdk[1]?.['ours bytes']).toBeLessThan((sdk[0]?.['ours bytes'] ?? 0) * 1.1);
    expect(byId.memory?.rows.every((r) => (r.metrics['RSS MiB'] ?? 0) > 10)).toBe(true);
    // A start takes real time: spawning Node alone takes tens of milliseconds.
    expect(byId.startup?.rows.map((r) => [r.case, r.metrics.starts])).toEqual([
      ['new database (migrations run)', 1],
      ['existing database', 1],
    ]);
    expect(byId.startup?.rows.every((r) => (r.metrics['median ms'] ?? 0) > 20)).toBe(true);
    // A 20,000-character output reaches the model cut to at most TOOL_OUTPUT_MAX_CHARS (16,000).
    const sent = byId['tool-output']?.rows[0]?.metrics['characters sent to the model'] ?? 0;
    expect(sent).toBeGreaterThan(15_000);
    expect(sent).toBeLessThanOrEqual(16_000);
  }, 120_000);

  it('runs the context budget benchmark at a tiny size: each case reaches the model, every request within the window', async () => {
    const [result] = await runSuite(SMOKE_SIZES, {
      postgresUrl: inject('postgresUrl'),
      only: ['context-budget'],
    });
    if (!result) throw new Error('no context budget result');
    expectPlausible(result);
    expect(result.rows.map((r) => r.case).slice(0, 3)).toEqual([
      '2 items',
      '20 items',
      '20 items, compaction due',
    ]);
    expect(result.rows.at(-1)?.metrics['tokens sent']).toBeGreaterThan(0);
  }, 60_000);

  it('runs the console benchmark at a tiny size: every page and API call answered, clicks quiet and loaded', async () => {
    const [result] = await runSuite(SMOKE_SIZES, { postgresUrl: inject('postgresUrl'), only: ['console'] });
    if (!result) throw new Error('no console result');
    expectPlausible(result);
    const size = SMOKE_SIZES.console;
    const [seeded, ...timed] = result.rows;
    expect(seeded?.metrics.pending).toBe(size.pending);
    // Whole stories of decided requests: up to a story short of the events asked for.
    expect(seeded?.metrics.events).toBeLessThanOrEqual(size.events);
    expect(seeded?.metrics.events).toBeGreaterThan(size.events - 6);
    const gets = timed.filter((r) => r.case.startsWith('GET '));
    // Eight reads, each one at a time and a few at a time.
    expect(gets).toHaveLength(16);
    expect(gets.every((r) => r.metrics.requests === size.samples)).toBe(true);
    expect(timed.filter((r) => r.case.startsWith('click')).map((r) => r.metrics.clicks)).toEqual([3, 3]);
    const loaded = timed.find((r) => r.case.endsWith('console loaded'));
    expect(loaded?.metrics['console requests/s']).toBeGreaterThan(0);
    expect(result.targets).toHaveLength(1);
  }, 120_000);

  it("the console bench's seeder writes requests and an audit chain that `npm run audit -- verify` accepts", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'console-seed-'));
    try {
      const path = join(dir, 'bot.db');
      const seed = await seedConsoleDatabase({ kind: 'sqlite', path }, { pending: 7, events: 12_000 });
      expect(seed.pendingIds).toHaveLength(7);
      expect(seed.events).toBeGreaterThan(11_990);
      expect(seed.events).toBeLessThanOrEqual(12_000);
      const out: string[] = [];
      const code = await runAuditCli(
        ['verify'],
        { DATABASE_PATH: path },
        {
          out: (line) => out.push(line),
          err: (line) => out.push(line),
          now: () => Date.now(),
        },
      );
      expect(out.join('\n')).toContain(`${seed.events} events, chain intact`);
      expect(code).toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
