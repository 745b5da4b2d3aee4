import { expect } from 'vitest';
import { type BenchResult, formatTable } from '../../bench/report.js';

/** A benchmark's result as the smoke runs expect it: rows with finite figures, targets judged as stated. */
export function expectPlausible(result: BenchResult) {
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
