import type { AuditKind } from './audit-event.js';

/** The model's usage by one run, as the event that ended it (`run.completed`, `run.failed`, `run.cancelled`) recorded it. */
export interface RunUsage {
  runId: string;
  teamId: string | null;
  /** Who started the run (the actor of its `run.started` event); null when that event is not in the log. */
  userId: string | null;
  promptTokens: number;
  completionTokens: number;
  /** False when the event holds no counts (written before usage was kept, or by a server that sent none). */
  recorded: boolean;
  /** The tools the run called (its `tool.finished` events). */
  tools: string[];
}

/** The end of a run that always counts in usage. */
export const USAGE_END_KIND: AuditKind = 'run.completed';

/**
 * Ends of runs that ended early (stopped, failed at a limit): they count when they recorded the usage so far;
 * those written before that was recorded are left out, not counted as runs without usage.
 */
export const EARLY_END_KINDS: readonly AuditKind[] = ['run.failed', 'run.cancelled'];

/** The reviewer's note on a request (`APPROVAL_REVIEW`): its tokens are counted apart from the runs'. */
export const REVIEW_USAGE_KIND: AuditKind = 'approval.reviewed';

/** The reviewer's tokens: reviews asked for (those skipped included) and what they used. */
export interface ReviewUsage {
  reviews: number;
  promptTokens: number;
  completionTokens: number;
}

/** Adds up the payloads of `approval.reviewed` events (JSON text; unreadable ones count with 0 tokens). */
export function reviewUsage(payloads: readonly string[]): ReviewUsage {
  let promptTokens = 0;
  let completionTokens = 0;
  for (const text of payloads) {
    let payload: unknown;
    try {
      payload = JSON.parse(text);
    } catch {
      payload = {};
    }
    const usage = readUsagePayload(
      payload !== null && typeof payload === 'object' && !Array.isArray(payload)
        ? (payload as Record<string, unknown>)
        : {},
    );
    promptTokens += usage.promptTokens;
    completionTokens += usage.completionTokens;
  }
  return { reviews: payloads.length, promptTokens, completionTokens };
}

/** The line under the usage table that shows the reviewer's tokens, apart from the runs' total. */
export function formatReviewUsage(usage: ReviewUsage): string {
  const total = usage.promptTokens + usage.completionTokens;
  return `reviews (model notes on requests, not in the runs' total): ${number(usage.reviews)} reviews, prompt ${number(usage.promptTokens)}, completion ${number(usage.completionTokens)}, total ${number(total)}`;
}

export const USAGE_GROUPS = ['user', 'tool', 'team'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

export interface UsageTotals {
  runs: number;
  /** Runs whose counts were not recorded (counted as 0 tokens). */
  unrecorded: number;
  promptTokens: number;
  completionTokens: number;
  totalTokens: number;
}

export interface UsageLine extends UsageTotals {
  key: string;
}

/** Reads the `usage` object of the payload of a run's end; counts that are not numbers read as unrecorded. */
export function readUsagePayload(payload: Record<string, unknown>): {
  promptTokens: number;
  completionTokens: number;
  recorded: boolean;
} {
  const usage = payload.usage;
  // A count past 2^53 - 1 is no count of tokens (and would not fit the database's daily totals).
  const count = (value: unknown) =>
    typeof value === 'number' && value >= 0 && value <= Number.MAX_SAFE_INTEGER ? value : undefined;
  if (usage === null || typeof usage !== 'object' || Array.isArray(usage)) {
    return { promptTokens: 0, completionTokens: 0, recorded: false };
  }
  const fields = usage as Record<string, unknown>;
  const prompt = count(fields.promptTokens);
  const completion = count(fields.completionTokens);
  return {
    promptTokens: prompt ?? 0,
    completionTokens: completion ?? 0,
    recorded: prompt !== undefined && completion !== undefined,
  };
}

const EMPTY: UsageTotals = { runs: 0, unrecorded: 0, promptTokens: 0, completionTokens: 0, totalTokens: 0 };

function add(totals: UsageTotals, run: RunUsage): UsageTotals {
  return {
    runs: totals.runs + 1,
    unrecorded: totals.unrecorded + (run.recorded ? 0 : 1),
    promptTokens: totals.promptTokens + run.promptTokens,
    completionTokens: totals.completionTokens + run.completionTokens,
    totalTokens: totals.totalTokens + run.promptTokens + run.completionTokens,
  };
}

export function usageTotals(runs: readonly RunUsage[]): UsageTotals {
  return runs.reduce(add, EMPTY);
}

/** The key(s) a run counts under: by tool, a run counts under every tool it called (or `(no tool)`). */
function keysOf(run: RunUsage, by: UsageGroup): string[] {
  switch (by) {
    case 'user':
      return [run.userId ?? '(unknown)'];
    case 'team':
      return [run.teamId ?? '(none)'];
    case 'tool':
      return run.tools.length > 0 ? [...new Set(run.tools)] : ['(no tool)'];
  }
}

/** Usage per user, tool or team, the largest total first. */
export function usageBy(runs: readonly RunUsage[], by: UsageGroup): UsageLine[] {
  const groups = new Map<string, UsageTotals>();
  for (const run of runs) {
    for (const key of keysOf(run, by)) groups.set(key, add(groups.get(key) ?? EMPTY, run));
  }
  return [...groups]
    .map(([key, totals]) => ({ key, ...totals }))
    .sort((a, b) => b.totalTokens - a.totalTokens || (a.key < b.key ? -1 : 1));
}

const number = (n: number) => n.toLocaleString('en-US');

/** A plain-text table with a total line (by tool, a run that called several tools is in several lines). */
export function formatUsageTable(lines: readonly UsageLine[], totals: UsageTotals, by: UsageGroup): string[] {
  const header = [by, 'runs', 'prompt', 'completion', 'total'];
  const body = [
    ...lines.map((l) => [
      l.key,
      number(l.runs),
      number(l.promptTokens),
      number(l.completionTokens),
      number(l.totalTokens),
    ]),
    [
      'all',
      number(totals.runs),
      number(totals.promptTokens),
      number(totals.completionTokens),
      number(totals.totalTokens),
    ],
  ].map((cells) => cells.map((cell) => cell.replace(/\p{Cc}/gu, '?')));
  const widths = header.map((title, i) =>
    Math.max(title.length, ...body.map((cells) => cells[i]?.length ?? 0)),
  );
  const render = (cells: readonly string[]) =>
    cells
      .map((cell, i) => (i === 0 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  const notes =
    totals.unrecorded > 0
      ? [`${totals.unrecorded} of ${totals.runs} runs have no recorded usage (counted as 0 tokens).`]
      : [];
  return [render(header), ...body.map(render), ...notes];
}
