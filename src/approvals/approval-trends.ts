import type { RunUsage } from '../audit/usage.js';
import { APPROVAL_STATUSES, type ApprovalStatus } from './approval.js';

/** One UTC day in milliseconds: figures are bucketed by the UTC day of their time. */
export const DAY_MS = 86_400_000;
/** The longest window the charts read (one row per day per figure; the store reads within it only). */
export const MAX_TREND_DAYS = 366;
/** Tools in "most requested", and people or tools drawn as their own token line (the rest are summed). */
export const TOP_TOOLS = 10;
export const TOP_TOKEN_SERIES = 6;
/** The line that sums people or tools past the top ones. */
export const OTHERS = '(others)';

/** Which workspace and which times (epoch ms, both included) the figures are over. */
export interface TrendWindow {
  teamId: string;
  since: number;
  until: number;
}

/** What the store reads for the charts, grouped by UTC day number (`floor(epoch ms / DAY_MS)`) where it can. */
export interface TrendRows {
  /** Requests made in the window, by the day they were made and their current status. */
  requestsByDay: { day: number; status: ApprovalStatus; count: number }[];
  /** Time from request to decision of the requests made in the window that were decided. */
  waits: { tool: string; waitMs: number }[];
  /** Requests made in the window per tool. */
  tools: { tool: string; count: number }[];
  /** Expiries and escalations recorded in the window, by day. */
  deadlines: { day: number; kind: 'approval.expired' | 'approval.escalated'; count: number }[];
  /** Runs that ended in the window, with their usage and when they ended. */
  runs: (RunUsage & { at: number })[];
}

/** A number per day of the window, for one person, tool or outcome. */
export interface DailySeries {
  key: string;
  perDay: number[];
  total: number;
}

/** The figures of the charts page and of `GET /console/api/stats`. */
export interface ApprovalTrends {
  since: string;
  until: string;
  /** Every UTC day of the window (`2026-05-01`), the x axis of the daily figures. */
  days: string[];
  /** Requests per day by current status; only statuses that occur. */
  requestsPerDay: DailySeries[];
  /** Per tool, time to decision: nearest-rank p50 and p90 over decided requests. */
  decisionTime: { tool: string; decided: number; p50Ms: number; p90Ms: number }[];
  /** The most requested tools, most first. */
  topTools: { tool: string; requests: number }[];
  expiredPerDay: number[];
  escalatedPerDay: number[];
  /** Total tokens per day, by the person who started the run and by the tools it called. */
  tokens: { byPerson: DailySeries[]; byTool: DailySeries[] };
}

/** The p-th percentile (0 < p ≤ 1) of sorted values by nearest rank: a value that occurred. */
export function nearestRank(sorted: readonly number[], p: number): number {
  return sorted[Math.max(Math.ceil(p * sorted.length) - 1, 0)] ?? 0;
}

/** `2026-05-01` for a UTC day number. */
export function dayLabel(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

/** Turns the store's rows into the figures, over every day of the window (days without data are zeros). Pure. */
export function buildTrends(rows: TrendRows, window: TrendWindow): ApprovalTrends {
  const first = Math.floor(window.since / DAY_MS);
  const count = Math.floor(window.until / DAY_MS) - first + 1;
  const slot = (day: number) => day - first;
  const daily = () => new Array<number>(count).fill(0);
  const byStatus = new Map<ApprovalStatus, number[]>();
  for (const r of rows.requestsByDay) {
    const series = byStatus.get(r.status) ?? daily();
    series[slot(r.day)] = (series[slot(r.day)] ?? 0) + r.count;
    byStatus.set(r.status, series);
  }
  const expired = daily();
  const escalated = daily();
  for (const d of rows.deadlines) {
    const series = d.kind === 'approval.expired' ? expired : escalated;
    series[slot(d.day)] = (series[slot(d.day)] ?? 0) + d.count;
  }
  return {
    since: new Date(window.since).toISOString(),
    until: new Date(window.until).toISOString(),
    days: Array.from({ length: count }, (_, i) => dayLabel(first + i)),
    requestsPerDay: APPROVAL_STATUSES.flatMap((status) => {
      const perDay = byStatus.get(status);
      return perDay ? [{ key: status, perDay, total: sum(perDay) }] : [];
    }),
    decisionTime: decisionTimes(rows.waits),
    topTools: [...rows.tools]
      .sort((a, b) => b.count - a.count || a.tool.localeCompare(b.tool))
      .slice(0, TOP_TOOLS)
      .map((t) => ({ tool: t.tool, requests: t.count })),
    expiredPerDay: expired,
    escalatedPerDay: escalated,
    tokens: {
      byPerson: tokenSeries(rows.runs, (run) => [run.userId ?? '(unknown)'], first, count),
      byTool: tokenSeries(
        rows.runs,
        (run) => (run.tools.length > 0 ? [...new Set(run.tools)] : ['(no tool)']),
        first,
        count,
      ),
    },
  };
}

function decisionTimes(waits: TrendRows['waits']): ApprovalTrends['decisionTime'] {
  const perTool = new Map<string, number[]>();
  for (const w of waits) perTool.set(w.tool, [...(perTool.get(w.tool) ?? []), w.waitMs]);
  return [...perTool]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([tool, values]) => {
      const sorted = values.sort((a, b) => a - b);
      return {
        tool,
        decided: sorted.length,
        p50Ms: nearestRank(sorted, 0.5),
        p90Ms: nearestRank(sorted, 0.9),
      };
    });
}

/**
 * Tokens per day per key (a run counts under each of its keys, as `npm run audit -- usage` counts it), the
 * largest totals first; past `TOP_TOKEN_SERIES` the rest are summed in one `(others)` line.
 */
function tokenSeries(
  runs: TrendRows['runs'],
  keysOf: (run: RunUsage) => string[],
  first: number,
  count: number,
): DailySeries[] {
  const perKey = new Map<string, number[]>();
  for (const run of runs) {
    const slot = Math.floor(run.at / DAY_MS) - first;
    for (const key of keysOf(run)) {
      const series = perKey.get(key) ?? new Array<number>(count).fill(0);
      series[slot] = (series[slot] ?? 0) + run.promptTokens + run.completionTokens;
      perKey.set(key, series);
    }
  }
  const ranked = [...perKey]
    .map(([key, perDay]) => ({ key, perDay, total: sum(perDay) }))
    .sort((a, b) => b.total - a.total || a.key.localeCompare(b.key));
  if (ranked.length <= TOP_TOKEN_SERIES) return ranked;
  const rest = ranked.slice(TOP_TOKEN_SERIES);
  const perDay = Array.from({ length: count }, (_, i) => sum(rest.map((s) => s.perDay[i] ?? 0)));
  return [...ranked.slice(0, TOP_TOKEN_SERIES), { key: OTHERS, perDay, total: sum(perDay) }];
}

function sum(values: readonly number[]): number {
  return values.reduce((a, b) => a + b, 0);
}
