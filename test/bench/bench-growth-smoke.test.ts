import { describe, expect, inject, it } from 'vitest';
import { runSuite, SMOKE_SIZES } from '../../bench/suite.js';
import { expectPlausible } from './bench-plausible.js';

/** Its own file, so that `npm test` runs it beside the other benchmarks' smoke run rather than after it. */
describe('npm run bench -- growth', () => {
  it('runs the growth benchmark at a tiny size: every command, read, decision and click on both engines', async () => {
    const [result] = await runSuite(SMOKE_SIZES, { postgresUrl: inject('postgresUrl'), only: ['growth'] });
    if (!result) throw new Error('no growth result');
    expectPlausible(result);
    const size = SMOKE_SIZES.growth;
    for (const engine of ['SQLite', 'PostgreSQL']) {
      const cases = result.rows.map((r) => r.case).filter((c) => c.startsWith(`${engine},`));
      // The empty log, each size of log, and the longer queue: seeded, verified, exported, read, decided.
      expect(cases.filter((c) => c.endsWith(': seeded'))).toHaveLength(1 + size.events.length + 1);
      expect(cases.filter((c) => c.endsWith(': audit verify'))).toHaveLength(1 + size.events.length + 1);
      expect(cases.filter((c) => c.includes(': audit prune'))).toHaveLength(size.events.length + 1);
      expect(cases.filter((c) => c.includes('while audit prune'))).toHaveLength(1);
      const decided = result.rows.filter((r) => r.case.startsWith(`${engine},`) && r.metrics['decisions/s']);
      expect(decided).toHaveLength(1 + size.events.length + 1);
    }
    // Every command ran as its own process and told its peak memory: more than Node alone.
    const verifies = result.rows.filter((r) => r.case.endsWith(': audit verify'));
    expect(verifies.every((r) => (r.metrics['peak MiB'] ?? 0) > 20)).toBe(true);
    expect(result.targets.length).toBeGreaterThan(10);
    // About 30 commands and 4 bot starts, each a process of its own: minutes on a busy machine.
  }, 420_000);
});
