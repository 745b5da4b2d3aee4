import { parseArgs } from 'node:util';
import { parseTimePoint } from '../audit/time-filter.js';
import {
  formatReviewUsage,
  formatUsageTable,
  USAGE_GROUPS,
  type UsageGroup,
  usageBy,
  usageTotals,
} from '../audit/usage.js';
import { readReviewUsage, readRunUsage, type UsageFilter } from '../db/usage-queries.js';
import { argumentProblem } from './argument-problem.js';
import { withDatabase } from './audit-database.js';
import type { CliIo } from './audit-io.js';

type UsageArgs =
  | { ok: true; filter: UsageFilter; by: UsageGroup; format: 'table' | 'jsonl' }
  | { ok: false; message: string };

const DEFAULT_USAGE_WINDOW = '30d';

/** `usage [--since …] [--until …] [--team T…] [--by user|tool|team] [--format table|jsonl]`: the model's tokens. */
export async function runUsage(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
  seeHelp: string,
): Promise<number> {
  const args = parseUsage(argv, io.now());
  if (!args.ok) {
    io.err(`${args.message}\n${seeHelp}`);
    return 2;
  }
  return withDatabase(env, io, async (db) => {
    const runs = await db.read(() => readRunUsage(db.dialect, args.filter));
    const reviews = await db.read(() => readReviewUsage(args.filter));
    const lines = usageBy(runs, args.by);
    const out =
      args.format === 'jsonl'
        ? [
            ...lines.map((line) => JSON.stringify({ [args.by]: line.key, ...line, key: undefined })),
            ...(reviews.reviews > 0 ? [JSON.stringify({ purpose: 'review', ...reviews })] : []),
          ]
        : [
            ...formatUsageTable(lines, usageTotals(runs), args.by),
            ...(reviews.reviews > 0 ? [formatReviewUsage(reviews)] : []),
          ];
    for (const line of out) io.out(line);
    return 0;
  });
}

function parseUsage(argv: readonly string[], now: number): UsageArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv.slice(1),
      options: {
        since: { type: 'string' },
        until: { type: 'string' },
        team: { type: 'string' },
        by: { type: 'string' },
        format: { type: 'string' },
      },
    });
  } catch (error) {
    return { ok: false, message: argumentProblem(error) };
  }
  const v = parsed.values;
  const by = typeof v.by === 'string' ? v.by : 'user';
  if (!isUsageGroup(by)) return { ok: false, message: '--by must be user, tool or team' };
  const format = typeof v.format === 'string' ? v.format : 'table';
  if (format !== 'table' && format !== 'jsonl')
    return { ok: false, message: '--format must be table or jsonl' };
  if (typeof v.team === 'string' && !/^[TE][A-Z0-9]{2,}$/.test(v.team)) {
    return { ok: false, message: '--team must be a Slack team ID such as T012ABCDEF' };
  }
  const filter: UsageFilter = typeof v.team === 'string' ? { teamId: v.team } : {};
  for (const key of ['since', 'until'] as const) {
    const text = v[key] ?? (key === 'since' ? DEFAULT_USAGE_WINDOW : undefined);
    if (typeof text !== 'string') continue;
    const at = parseTimePoint(text, now);
    if (at === undefined) {
      return {
        ok: false,
        message: `--${key} must be a span such as 7d, 12h, 30m or a date such as 2026-05-01`,
      };
    }
    filter[key] = at;
  }
  return { ok: true, filter, by, format };
}

function isUsageGroup(text: string): text is UsageGroup {
  return (USAGE_GROUPS as readonly string[]).includes(text);
}
