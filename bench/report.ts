import { writeFileSync } from 'node:fs';
import { cpus, loadavg, totalmem } from 'node:os';

/** One line of a benchmark's table: a case (e.g. "concurrency 10") and its figures by metric name. */
export interface Row {
  case: string;
  metrics: Record<string, number>;
}

/** A target from the benchmark issue, checked against a figure of the same run. */
export interface TargetCheck {
  target: string;
  /** The measured figure (a ratio or an absolute value, in `unit`). */
  value: number;
  /** The figure must be at most this. */
  limit: number;
  unit: string;
  met: boolean;
}

export interface BenchResult {
  id: string;
  title: string;
  rows: Row[];
  targets: TargetCheck[];
  /** What the figures include and exclude, in a sentence or two. */
  notes: string[];
}

export function target(target: string, value: number, limit: number, unit: string): TargetCheck {
  return { target, value, limit, unit, met: value <= limit };
}

/** The q-quantile (0..1) of `values` by nearest rank; 0 for an empty list. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[rank] ?? 0;
}

export const median = (values: readonly number[]): number => quantile(values, 0.5);

export function round(value: number, digits = 3): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

export function machine() {
  const cpu = cpus();
  return {
    node: process.version,
    platform: `${process.platform} ${process.arch}`,
    cpuModel: cpu[0]?.model ?? 'unknown',
    cores: cpu.length,
    memoryGiB: round(totalmem() / 2 ** 30, 1),
    /** 1-minute load average: other work on the machine skews absolute times (ratios hold better). */
    loadAverage: round(loadavg()[0] ?? 0, 2),
  };
}

function formatNumber(value: number): string {
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(1) : value.toPrecision(3);
}

/** A plain-text table of one benchmark: one line per case, one column per metric. */
export function formatTable(result: BenchResult): string {
  const metrics = [...new Set(result.rows.flatMap((row) => Object.keys(row.metrics)))];
  const header = ['case', ...metrics];
  const lines = result.rows.map((row) => [
    row.case,
    ...metrics.map((m) => (row.metrics[m] === undefined ? '' : formatNumber(row.metrics[m]))),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const pad = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const targets = result.targets.map(
    (t) =>
      `  ${t.met ? 'MET   ' : 'MISSED'} ${t.target}: ${formatNumber(round(t.value))} ${t.unit} (limit ${formatNumber(t.limit)})`,
  );
  return [
    `## ${result.title}`,
    pad(header),
    pad(widths.map((w) => '-'.repeat(w))),
    ...lines.map(pad),
    ...targets,
    ...result.notes.map((n) => `  note: ${n}`),
    '',
  ].join('\n');
}

/** Writes every figure with the machine and the date, for the README and for comparing runs. */
export function writeResults(
  path: string,
  results: BenchResult[],
  seconds: number,
  loadAtStart: number,
): void {
  const json = {
    date: new Date().toISOString(),
    machine: { ...machine(), loadAverageAtStart: loadAtStart },
    durationSeconds: round(seconds, 1),
    benchmarks: results.map((r) => ({
      ...r,
      rows: r.rows.map((row) => ({
        case: row.case,
        metrics: Object.fromEntries(Object.entries(row.metrics).map(([k, v]) => [k, round(v, 4)])),
      })),
      targets: r.targets.map((t) => ({ ...t, value: round(t.value, 4) })),
    })),
  };
  writeFileSync(path, `${JSON.stringify(json, null, 2)}\n`);
}
