import { closeSync, openSync, writeFileSync, writeSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { APPROVAL_STATUSES } from '../approvals/approval.js';
import type { AuditEventFilter } from '../approvals/audit-queries.js';
import {
  EXPORT_FORMATS,
  type ExportFormat,
  type ExportRow,
  formatEvents,
  streamEvents,
} from '../audit/audit-export.js';
import { parseTimePoint } from '../audit/time-filter.js';
import { verifyChainInBatches } from '../audit/verify-chain.js';
import { createAuditQueryStore } from '../db/audit-query-store.js';
import type { SqlDatabase } from '../db/sql/sql-database.js';
import { argumentProblem } from './argument-problem.js';
import { withDatabase } from './audit-database.js';
import { EXTRA_USAGE, isExtraCommand, runExtraCommand } from './audit-extra.js';
import type { CliIo } from './audit-io.js';
import { tellVerdict } from './audit-verify.js';
import { TERMINAL_NAME, TERMINAL_TEAM_ID } from './terminal-thread.js';

export const AUDIT_USAGE = `Usage: npm run audit -- <command> [options]

Commands:
  verify                 check the hash chain; exit 0 when intact, 1 naming the first tampered event
  list                   print audit events (default format: table)
  export --out FILE      write audit events to FILE (format from its extension: .jsonl, else csv)
${EXTRA_USAGE}

Filters (list and export):
  --since 7d|12h|30m|2w|2026-05-01   events at or after this time (a date: from its start, UTC)
  --until <same>                      events at or before this time (a date: up to its end, UTC)
  --user U…|NAME  events by this user (a Slack user ID, or a terminal chat user name), or about their requests
  --tool NAME     events about this tool
  --status S      events of approvals now in this status (${APPROVAL_STATUSES.join(', ')})
  --team T…|local events of this workspace (local: terminal conversations)
  --enterprise E… events of this Enterprise Grid organisation (every workspace of it)
  --format table|csv|jsonl

The database is DATABASE_URL (PostgreSQL) when set, else DATABASE_PATH (SQLite, default ./data/bot.db),
from the environment or .env.`;

const optionsSchema = z.object({
  since: z.string().optional(),
  until: z.string().optional(),
  // Slack user IDs (U012ABCDEF) and the names people chose in the terminal chat (`--user alice`).
  user: z
    .string()
    .regex(
      TERMINAL_NAME,
      '--user must be a Slack user ID such as U012ABCDEF or a terminal user name such as alice',
    )
    .optional(),
  tool: z.string().min(1).optional(),
  status: z
    .enum(APPROVAL_STATUSES, { message: `--status must be one of ${APPROVAL_STATUSES.join(', ')}` })
    .optional(),
  team: z
    .string()
    .refine(
      (team) => /^[TE][A-Z0-9]{2,}$/.test(team) || team === TERMINAL_TEAM_ID,
      `--team must be a Slack team ID such as T012ABCDEF, or ${TERMINAL_TEAM_ID} for terminal conversations`,
    )
    .optional(),
  enterprise: z
    .string()
    .regex(/^E[A-Z0-9]+$/, '--enterprise must be an Enterprise Grid ID such as E012ABCDEF')
    .optional(),
  format: z.enum(EXPORT_FORMATS, { message: '--format must be table, csv or jsonl' }).optional(),
  out: z.string().min(1).optional(),
});

/** The line after a usage problem, instead of the whole usage: it is one flag away. */
const SEE_HELP = 'See npm run audit -- --help.';

type Parsed =
  | {
      ok: true;
      command: 'verify' | 'list' | 'export';
      filter: AuditEventFilter;
      format?: ExportFormat;
      out?: string;
    }
  | { ok: false; message: string };

/** Reads the command line; every problem is a message for the user, never an exception. */
export function parseAuditArgs(argv: readonly string[], now: number): Parsed {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: Object.fromEntries(Object.keys(optionsSchema.shape).map((key) => [key, { type: 'string' }])),
    });
  } catch (error) {
    return { ok: false, message: argumentProblem(error) };
  }
  const command = parsed.positionals[0];
  if ((command !== 'verify' && command !== 'list' && command !== 'export') || parsed.positionals.length > 1) {
    return {
      ok: false,
      message: command ? `Unknown command: ${parsed.positionals.join(' ')}` : 'No command given.',
    };
  }
  const options = optionsSchema.safeParse(parsed.values);
  if (!options.success) return { ok: false, message: options.error.issues.map((i) => i.message).join('\n') };
  const o = options.data;
  const filter: AuditEventFilter = {};
  for (const [key, text] of [
    ['since', o.since],
    ['until', o.until],
  ] as const) {
    if (text === undefined) continue;
    const at = parseTimePoint(text, now, key === 'until' ? 'end' : 'start');
    if (at === undefined)
      return {
        ok: false,
        message: `--${key} must be a span such as 7d, 12h, 30m or a date such as 2026-05-01`,
      };
    filter[key] = at;
  }
  if (o.user) filter.userId = o.user;
  if (o.tool) filter.tool = o.tool;
  if (o.status) filter.status = o.status;
  if (o.team) filter.teamId = o.team;
  if (o.enterprise) filter.enterpriseId = o.enterprise;
  if (command === 'export' && !o.out) return { ok: false, message: 'export needs --out FILE' };
  return {
    ok: true,
    command,
    filter,
    ...(o.format ? { format: o.format } : {}),
    ...(o.out ? { out: o.out } : {}),
  };
}

/**
 * `npm run audit -- verify|list|export`. Returns the exit code: 0 done (chain intact), 1 chain broken,
 * 2 usage or configuration problem.
 */
export async function runAuditCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
): Promise<number> {
  if (argv[0] === 'help' || argv.includes('--help') || argv.includes('-h')) {
    io.out(AUDIT_USAGE);
    return 0;
  }
  if (isExtraCommand(argv)) return runExtraCommand(argv, env, io, SEE_HELP);
  const args = parseAuditArgs(argv, io.now());
  if (!args.ok) {
    io.err(`${args.message}\n${SEE_HELP}`);
    return 2;
  }
  return withDatabase(env, io, (database) => runCommand(args, database, io));
}

/** Events per read while verifying or exporting: memory stays flat however long the log. */
const BATCH = 2_000;

async function runCommand(args: Extract<Parsed, { ok: true }>, db: SqlDatabase, io: CliIo): Promise<number> {
  const queries = createAuditQueryStore(db);
  if (args.command === 'verify') {
    // A batch at a time; only a broken chain is read whole, to name what was done to it.
    const verdict = await verifyChainInBatches(queries.chain, async () => undefined, BATCH);
    tellVerdict(verdict, io);
    return verdict.ok ? 0 : 1;
  }
  const format =
    args.format ?? (args.out?.endsWith('.jsonl') ? 'jsonl' : args.command === 'list' ? 'table' : 'csv');
  // A table's columns are as wide as their widest cell: it needs every row first.
  if (format === 'table') {
    const rows = await queries.events(args.filter);
    const lines = formatEvents(rows, format);
    if (args.command === 'list') for (const line of lines) io.out(line);
    else writeFileSync(args.out ?? '', `${lines.join('\n')}\n`, { mode: 0o600 });
    return done(args, rows.length, format, io);
  }
  let count = 0;
  async function* pages(): AsyncGenerator<ExportRow[]> {
    let cursor: number | undefined;
    do {
      const page = await queries.logPage(args.filter, {
        limit: BATCH,
        order: 'oldest',
        ...(cursor === undefined ? {} : { cursor }),
      });
      count += page.items.length;
      yield page.items;
      cursor = page.nextCursor ?? undefined;
    } while (cursor !== undefined);
  }
  const file = args.command === 'export' ? openSync(args.out ?? '', 'w', 0o600) : undefined;
  try {
    for await (const text of streamEvents(pages(), format)) {
      if (file === undefined) for (const line of text.slice(0, -1).split('\n')) io.out(line);
      else writeSync(file, text);
    }
  } finally {
    if (file !== undefined) closeSync(file);
  }
  return done(args, count, format, io);
}

/** What export says once the file is written; list says nothing more. */
function done(args: Extract<Parsed, { ok: true }>, count: number, format: ExportFormat, io: CliIo): number {
  if (args.command === 'export') io.out(`Wrote ${count} events to ${args.out ?? ''} (${format})`);
  return 0;
}
