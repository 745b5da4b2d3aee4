import { APPROVAL_STATUSES, type ApprovalStatus } from './approval.js';
import { bucketPercentile, type WaitBucketCount } from './wait-buckets.js';

/** One UTC day in milliseconds: figures are bucketed by the UTC day of their time. */
export const DAY_MS = 86_400_000;
/** The longest window the charts read (one row per day per figure; the store reads within it only). */
export const MAX_TREND_DAYS = 366;
/** Tools in "most requested", and people or tools drawn as their own token line (the rest are summed). */
export const TOP_TOOLS = 10;
export const TOP_TOKEN_SERIES = 6;
/** The line that sums people or tools past the top ones. */
export const OTHERS = '(others)';

/**
 * Which workspace and which times (epoch ms, both included) the figures are over: whole UTC days, from the start
 * of `since`'s day to the end of `until`'s (see {@link wholeDays}), since the database keeps them per day.
 */
export interface TrendWindow {
  teamId: string;
  since: number;
  until: number;
}

/** The window widened to whole UTC days: from the start of `since`'s day to the last millisecond of `until`'s. */
export function wholeDays(window: TrendWindow): TrendWindow {
  return {
    teamId: window.teamId,
    since: Math.floor(window.since / DAY_MS) * DAY_MS,
    until: (Math.floor(window.until / DAY_MS) + 1) * DAY_MS - 1,
  };
}

/**
 * What the store reads for the charts, from the database's daily totals (src/db/schema/daily-totals.ts),
 * grouped by UTC day number (`floor(epoch ms / DAY_MS)`) where the figure is per day.
 */
export interface TrendRows {
  /** Requests made in the window, by the day they were made and their current status. */
  requestsByDay: { day: number; status: ApprovalStatus; count: number }[];
  /** Requests made in the window that were decided, per tool and bucket of their time to decision. */
  waits: ({ tool: string } & WaitBucketCount)[];
  /** Requests made in the window per tool. */
  tools: { tool: string; count: number }[];
  /** Expiries and escalations recorded in the window, by day. */
  deadlines: { day: number; kind: 'approval.expired' | 'approval.escalated'; count: number }[];
  /**
   * Tokens of the runs that ended in the window, per day: by the person who started each run (null when the log
   * does not say), and by each tool it called (null for runs that called none).
   */
  tokens: { day: number; series: 'person' | 'tool'; key: string | null; tokens: number }[];
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
  /** Per tool, time to decision: nearest-rank p50 and p90 over decided requests, within 5 % (wait-buckets.ts). */
  decisionTime: { tool: string; decided: number; p50Ms: number; p90Ms: number }[];
  /** The most requested tools, most first. */
  topTools: { tool: string; requests: number }[];
  expiredPerDay: number[];
  escalatedPerDay: number[];
  /** Total tokens per day, by the person who started the run and by the tools it called. */
  tokens: { byPerson: DailySeries[]; byTool: DailySeries[] };
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
      byPerson: tokenSeries(rows.tokens, 'person', UNKNOWN_PERSON, first, count),
      byTool: tokenSeries(rows.tokens, 'tool', NO_TOOL, first, count),
    },
  };
}

function decisionTimes(waits: TrendRows['waits']): ApprovalTrends['decisionTime'] {
  const perTool = new Map<string, WaitBucketCount[]>();
  for (const { tool, ...bucket } of waits) perTool.set(tool, [...(perTool.get(tool) ?? []), bucket]);
  return [...perTool]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([tool, buckets]) => ({
      tool,
      decided: sum(buckets.map((b) => b.count)),
      p50Ms: bucketPercentile(buckets, 0.5) ?? 0,
      p90Ms: bucketPercentile(buckets, 0.9) ?? 0,
    }));
}

/** The key of tokens whose run's starter the log does not name, and of runs that called no tool. */
const UNKNOWN_PERSON = '(unknown)';
const NO_TOOL = '(no tool)';

/**
 * Tokens per day per key of one series (a run counts under each of its keys, as `npm run audit -- usage`
 * counts it), the largest totals first; past `TOP_TOKEN_SERIES` the rest are summed in one `(others)` line.
 */
function tokenSeries(
  tokens: TrendRows['tokens'],
  series: 'person' | 'tool',
  missingKey: string,
  first: number,
  count: number,
): DailySeries[] {
  const perKey = new Map<string, number[]>();
  for (const row of tokens) {
    if (row.series !== series) continue;
    const key = row.key ?? missingKey;
    const perDay = perKey.get(key) ?? new Array<number>(count).fill(0);
    perDay[row.day - first] = (perDay[row.day - first] ?? 0) + row.tokens;
    perKey.set(key, perDay);
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
