import { parseArgs } from 'node:util';
import { pastRequests } from '../approvals/past-requests.js';
import type { ApprovalPolicy } from '../approvals/policy.js';
import {
  changedDecisions,
  type ReplayedRequest,
  replayRequest,
  summarizeReplay,
} from '../approvals/policy-replay.js';
import { readPolicySource } from '../approvals/policy-source.js';
import { undecidableTools, undecidableWarning } from '../approvals/who-to-tell.js';
import { parseTimePoint } from '../audit/time-filter.js';
import { loadConfig } from '../config.js';
import { createAuditQueryStore } from '../db/audit-query-store.js';
import { toolNames } from '../tools/built-in-tools.js';
import { argumentProblem } from './argument-problem.js';
import { withDatabase } from './audit-database.js';

export interface PolicyCliIo {
  out(line: string): void;
  err(line: string): void;
  /** The time, for `--since 30d`; default now. */
  now?(): number;
  /** The environment, for the database (`DATABASE_URL` / `DATABASE_PATH`) and `ADMIN_USER_IDS`. */
  env?: NodeJS.ProcessEnv;
}

export const POLICY_USAGE = `Usage: npm run policy -- <command> [options]

Commands:
  check FILE     validate an approval policy file: print its summary (the lines the bot prints at start-up:
                 the file's own rules, then what differs in each workspace of "teams") and exit 0, or print
                 every problem and exit 1
  replay FILE [--since 30d] [--format table|jsonl]
                 for each approval request in the audit log, what FILE would have decided: approval needed or
                 not, who could have decided, whether the people who decided would still have been allowed,
                 which rule matched; a summary table and the differences. Reads the database, writes nothing.

The database is DATABASE_URL (PostgreSQL) when set, else DATABASE_PATH (SQLite, default ./data/bot.db), and
admins are ADMIN_USER_IDS, from the environment or .env.`;

/** The line after a usage problem, instead of the whole usage: it is one flag away. */
const SEE_HELP = 'See npm run policy -- --help.';

/** `npm run policy -- check FILE`; exit codes: 0 valid, 1 problems in the file, 2 bad usage. */
export async function runPolicyCli(argv: readonly string[], io: PolicyCliIo): Promise<number> {
  const [command, ...rest] = argv;
  if (command === 'help' || argv.includes('--help') || argv.includes('-h')) {
    io.out(POLICY_USAGE);
    return 0;
  }
  switch (command) {
    case 'check':
      return check(rest, io);
    case 'replay':
      return replay(rest, io);
    case undefined:
      io.err(`Name a command: check or replay.\n${SEE_HELP}`);
      return 2;
    default:
      io.err(`Unknown command "${command}".\n${SEE_HELP}`);
      return 2;
  }
}

function check(args: readonly string[], io: PolicyCliIo): number {
  const [file, ...extra] = args;
  if (file === undefined || extra.length > 0) {
    io.err('check takes one argument: the policy file (npm run policy -- check ./policy.json)');
    return 2;
  }
  const policy = validPolicy(file, 'check', io);
  if (!policy) return 1;
  // The file's own rules on one line, then one line per workspace with a section of its own.
  for (const line of policy.summary.split('\n')) io.out(line);
  // Admins come from the environment (or .env), as for the bot: a policy only they may decide needs some.
  const loaded = loadConfig(io.env ?? process.env, 'audit');
  const undecidable = loaded.ok ? undecidableTools(policy, toolNames(), loaded.config.adminUserIds) : [];
  if (undecidable.length > 0) io.err(`Warning: ${undecidableWarning(undecidable)}`);
  return 0;
}

/** The policy in `file`, or undefined once every problem in it was printed. */
function validPolicy(file: string, command: 'check' | 'replay', io: PolicyCliIo): ApprovalPolicy | undefined {
  const source = readPolicySource(file, toolNames(), `check the FILE given to npm run policy -- ${command}`);
  if (source.ok) return source.policy;
  io.err(`Approval policy error: ${file} has ${source.problems.length} problem(s).`);
  for (const problem of source.problems) io.err(`  - ${problem}`);
  return undefined;
}

async function replay(args: readonly string[], io: PolicyCliIo): Promise<number> {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: [...args],
      allowPositionals: true,
      options: { since: { type: 'string' }, format: { type: 'string' } },
    });
  } catch (error) {
    io.err(argumentProblem(error));
    return 2;
  }
  const [file, ...extra] = parsed.positionals;
  const format = parsed.values.format ?? 'table';
  if (file === undefined || extra.length > 0 || (format !== 'table' && format !== 'jsonl')) {
    io.err(
      'replay takes the policy file, then --since SPAN and --format table|jsonl: npm run policy -- replay ./policy.json --since 30d',
    );
    return 2;
  }
  const now = io.now?.() ?? Date.now();
  const sinceText = typeof parsed.values.since === 'string' ? parsed.values.since : undefined;
  const since = sinceText === undefined ? undefined : parseTimePoint(sinceText, now);
  if (sinceText !== undefined && since === undefined) {
    io.err('--since must be a span such as 30d, 12h or 2w, or a date such as 2026-05-01');
    return 2;
  }
  const policy = validPolicy(file, 'replay', io);
  if (!policy) return 1;
  return withDatabase(io.env ?? process.env, io, async (database, { adminUserIds }) => {
    const { requests: past, pruned } = await pastRequests(createAuditQueryStore(database), { since });
    const replayed = past.map((request) => replayRequest(policy, request, adminUserIds));
    for (const line of format === 'jsonl' ? replayed.map((r) => JSON.stringify(r)) : table(replayed, file))
      io.out(line);
    if (pruned.count > 0) {
      const note = `${pruned.count} older request(s) had their arguments removed by retention (${[...pruned.limits].join(', ')}) and were not replayed.`;
      if (format === 'jsonl') io.err(note);
      else io.out(note);
    }
    return 0;
  });
}

/** The summary table per tool, then one line per request that would have gone differently. */
function table(replayed: readonly ReplayedRequest[], file: string): string[] {
  const rows = summarizeReplay(replayed);
  const header = ['tool', 'requests', 'need approval', 'no approval', 'decider refused', 'differ'];
  const cells = rows.map((r) => [
    r.tool,
    String(r.requests),
    String(r.stillNeedApproval),
    String(r.noApproval),
    String(r.deciderRefused),
    String(r.differ),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: readonly string[]) =>
    c
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const differing = changedDecisions(replayed);
  return [
    `Replay of ${replayed.length} approval request(s) against ${file}:`,
    line(header),
    ...cells.map(line),
    '',
    differing.length === 0 ? 'No differences.' : `Differences (${differing.length}):`,
    ...differing.map(
      (r) =>
        `  ${r.approvalId} ${new Date(r.at).toISOString()} ${r.tool} by ${r.requesterId} in ${r.teamId} (${r.status}): ${r.differences.join('; ')}${r.after.error ? ` (rule could not be evaluated: ${r.after.error})` : ''}`,
    ),
  ];
}
