import { bigInteger, integer, text } from './columns.js';
import { table, uniqueIndex } from './table.js';

/*
 * Figures per workspace and UTC day (`day` is `floor(epoch ms / 86,400,000)`), kept by triggers in the database
 * (drizzle/sqlite and drizzle/postgres, `daily-totals` migrations) as rows are written, whoever writes them: the
 * charts and `/approvals stats` read a few rows per day instead of every request and run of their window, so
 * they cost the same after a year as after a week. Derived data: nothing else reads them, a copy of the
 * database leaves them to the target's triggers, and the migration that made them filled them from the rows
 * already stored. Rows whose count fell to 0 stay, and are skipped when read.
 */

/** Requests per workspace, UTC day they were made, tool and current status. */
export const approvalDays = table(
  'approval_days',
  {
    teamId: text('team_id').notNull(),
    day: integer('day').notNull(),
    toolName: text('tool_name').notNull(),
    status: text('status').notNull(),
    requests: bigInteger('requests').notNull(),
  },
  (t) => [uniqueIndex('approval_days_key').on(t.teamId, t.day, t.toolName, t.status)],
);

/**
 * Decided requests (those with a decision time) per workspace, UTC day they were made, tool and wait bucket:
 * `bucket` is `floor(ln(wait in ms, at least 1) / ln(1.1))`, so a bucket spans 10 % of its waits and a
 * percentile read from the buckets is within 5 % of the exact one (src/approvals/wait-buckets.ts).
 */
export const approvalWaitDays = table(
  'approval_wait_days',
  {
    teamId: text('team_id').notNull(),
    day: integer('day').notNull(),
    toolName: text('tool_name').notNull(),
    bucket: integer('bucket').notNull(),
    decided: bigInteger('decided').notNull(),
  },
  (t) => [uniqueIndex('approval_wait_days_key').on(t.teamId, t.day, t.toolName, t.bucket)],
);

/**
 * The model's usage of the runs that ended (as `npm run audit -- usage` counts them: `run.completed`, and
 * `run.failed` or `run.cancelled` that recorded their usage) per workspace and UTC day they ended, twice: by
 * the person who started the run (`series` = `person`, `series_key` their user ID, '' when the log does not
 * say) and by each tool the run called (`series` = `tool`, '' for a run that called none). Each run counts once under `person`.
 */
export const runUsageDays = table(
  'run_usage_days',
  {
    teamId: text('team_id').notNull(),
    day: integer('day').notNull(),
    series: text('series', { enum: ['person', 'tool'] }).notNull(),
    seriesKey: text('series_key').notNull(),
    runs: bigInteger('runs').notNull(),
    /** Runs whose end recorded no counts (counted as 0 tokens). */
    unrecorded: bigInteger('unrecorded').notNull(),
    promptTokens: bigInteger('prompt_tokens').notNull(),
    completionTokens: bigInteger('completion_tokens').notNull(),
  },
  (t) => [uniqueIndex('run_usage_days_key').on(t.teamId, t.day, t.series, t.seriesKey)],
);

/** Expiries and escalations (`approval.expired`, `approval.escalated` audit events) per workspace and UTC day. */
export const deadlineDays = table(
  'deadline_days',
  {
    teamId: text('team_id').notNull(),
    day: integer('day').notNull(),
    kind: text('kind', { enum: ['approval.expired', 'approval.escalated'] }).notNull(),
    events: bigInteger('events').notNull(),
  },
  (t) => [uniqueIndex('deadline_days_key').on(t.teamId, t.day, t.kind)],
);
