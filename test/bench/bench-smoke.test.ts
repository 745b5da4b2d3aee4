import { describe, expect, inject, it } from 'vitest';
import { formatTable } from '../../bench/report.js';
import { runSuite, SMOKE_SIZES } from '../../bench/suite.js';

describe('npm run bench', () => {
  it('runs every benchmark at a tiny size and reports plausible figures', async () => {
    // The PostgreSQL rows use the test run's server (test/support/postgres-server.ts): no second server.
    const results = await runSuite(SMOKE_SIZES, { postgresUrl: inject('postgresUrl') });
    expect(results.map((r) => r.id)).toEqual([
      'click-ack',
      'turn-overhead',
      'pause-resume',
      'sdk-compare',
      'decisions',
      'memory',
      'startup',
    ]);
    for (const result of results) {
      expect(result.rows.length).toBeGreaterThan(0);
      for (const row of result.rows) {
        expect(Object.keys(row.metrics).length).toBeGreaterThan(0);
        for (const value of Object.values(row.metrics)) {
          expect(Number.isFinite(value)).toBe(true);
          expect(value).toBeGreaterThanOrEqual(0);
        }
      }
      for (const t of result.targets) expect(t.met).toBe(t.value <= t.limit);
      expect(formatTable(result)).toContain(result.title);
    }
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
  }, 120_000);
});
