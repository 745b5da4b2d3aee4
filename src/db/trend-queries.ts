import { sql } from 'drizzle-orm';
import { APPROVAL_STATUSES } from '../approvals/approval.js';
import { DAY_MS, type TrendRows, type TrendWindow } from '../approvals/approval-trends.js';
import type { WaitBucketCount } from '../approvals/wait-buckets.js';
import type { UsageTotals } from '../audit/usage.js';
import { readEnum, readNumber, readString } from './sql/columns.js';
import { type Program, row, rows } from './sql/program.js';

/**
 * The charts' and `/approvals stats`' figures, read from the daily totals the database keeps
 * (src/db/schema/daily-totals.ts): a few rows per day of the window, however many requests and runs it holds.
 */

/** A workspace's days from `first` to `last` (UTC day numbers, both included; `last` omitted: every day since). */
interface DayRange {
  teamId: string;
  first: number;
  last?: number;
}

const inRange = ({ teamId, first, last }: DayRange) =>
  last === undefined
    ? sql`team_id = ${teamId} and day >= ${first}`
    : sql`team_id = ${teamId} and day >= ${first} and day <= ${last}`;

const DEADLINE_KINDS = ['approval.expired', 'approval.escalated'] as const;
const SERIES = ['person', 'tool'] as const;

export function* readTrends(window: TrendWindow): Program<TrendRows> {
  const range = inRange({
    teamId: window.teamId,
    first: Math.floor(window.since / DAY_MS),
    last: Math.floor(window.until / DAY_MS),
  });
  const byDay =
    yield* rows(sql`select day, status, cast(sum(requests) as bigint) as n from approval_days where ${range}
    group by day, status having sum(requests) > 0`);
  const waits =
    yield* rows(sql`select tool_name, bucket, cast(sum(decided) as bigint) as n from approval_wait_days
    where ${range} group by tool_name, bucket having sum(decided) > 0`);
  const tools =
    yield* rows(sql`select tool_name, cast(sum(requests) as bigint) as n from approval_days where ${range}
    group by tool_name having sum(requests) > 0`);
  const deadlines = yield* rows(sql`select day, kind, events from deadline_days where ${range}`);
  const tokens = yield* rows(sql`select day, series, series_key,
      cast(sum(prompt_tokens + completion_tokens) as bigint) as tokens
    from run_usage_days where ${range} group by day, series, series_key`);
  return {
    requestsByDay: byDay.map((r) => ({
      day: readNumber(r, 'day'),
      status: readEnum(r, 'status', APPROVAL_STATUSES),
      count: readNumber(r, 'n'),
    })),
    waits: waits.map((w) => ({
      tool: readString(w, 'tool_name'),
      bucket: readNumber(w, 'bucket'),
      count: readNumber(w, 'n'),
    })),
    tools: tools.map((t) => ({ tool: readString(t, 'tool_name'), count: readNumber(t, 'n') })),
    deadlines: deadlines.map((d) => ({
      day: readNumber(d, 'day'),
      kind: readEnum(d, 'kind', DEADLINE_KINDS),
      count: readNumber(d, 'events'),
    })),
    tokens: tokens.map((t) => ({
      day: readNumber(t, 'day'),
      series: readEnum(t, 'series', SERIES),
      key: readString(t, 'series_key') || null,
      tokens: readNumber(t, 'tokens'),
    })),
  };
}

/** What `/approvals stats` shows of a workspace since the start of `since`'s UTC day (all time without it). */
export interface StatsRows {
  counts: { tool: string; status: (typeof APPROVAL_STATUSES)[number]; count: number }[];
  waits: WaitBucketCount[];
  usage: UsageTotals;
}

export function* readStats(teamId: string, since: number | undefined): Program<StatsRows> {
  const range = inRange({ teamId, first: since === undefined ? 0 : Math.floor(since / DAY_MS) });
  const counts =
    yield* rows(sql`select tool_name, status, cast(sum(requests) as bigint) as n from approval_days
    where ${range} group by tool_name, status having sum(requests) > 0 order by tool_name, status`);
  const waits =
    yield* rows(sql`select bucket, cast(sum(decided) as bigint) as n from approval_wait_days where ${range}
    group by bucket having sum(decided) > 0`);
  // Each run counts once under the person who started it.
  const usage = yield* row(sql`select cast(coalesce(sum(runs), 0) as bigint) as runs,
      cast(coalesce(sum(unrecorded), 0) as bigint) as unrecorded,
      cast(coalesce(sum(prompt_tokens), 0) as bigint) as prompt,
      cast(coalesce(sum(completion_tokens), 0) as bigint) as completion
    from run_usage_days where ${range} and series = 'person'`);
  const promptTokens = usage ? readNumber(usage, 'prompt') : 0;
  const completionTokens = usage ? readNumber(usage, 'completion') : 0;
  return {
    counts: counts.map((c) => ({
      tool: readString(c, 'tool_name'),
      status: readEnum(c, 'status', APPROVAL_STATUSES),
      count: readNumber(c, 'n'),
    })),
    waits: waits.map((w) => ({ bucket: readNumber(w, 'bucket'), count: readNumber(w, 'n') })),
    usage: {
      runs: usage ? readNumber(usage, 'runs') : 0,
      unrecorded: usage ? readNumber(usage, 'unrecorded') : 0,
      promptTokens,
      completionTokens,
      totalTokens: promptTokens + completionTokens,
    },
  };
}
