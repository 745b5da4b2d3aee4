import { parseArgs } from 'node:util';
import { formatEvents } from '../audit/audit-export.js';
import { auditEventsAfter, auditHeadSeq } from '../db/audit-push-store.js';
import type { SqlDatabase } from '../db/sql/sql-database.js';
import { argumentProblem } from './argument-problem.js';
import { withDatabase } from './audit-database.js';
import type { CliIo } from './audit-io.js';

/** What `tail --follow` also needs: when to stop (the command line stops on a signal) and how often to look. */
export interface FollowIo extends CliIo {
  signal?: AbortSignal;
  pollMs?: number;
}

type TailArgs =
  | { ok: true; lines: number; after: number | undefined; follow: boolean }
  | { ok: false; message: string };

const PAGE = 500;

/** `tail [--lines N] [--after SEQ] [--follow]`: the newest events as JSON lines, then new ones as they come. */
export async function runTail(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: FollowIo,
  seeHelp: string,
): Promise<number> {
  const args = parseTail(argv);
  if (!args.ok) {
    io.err(`${args.message}\n${seeHelp}`);
    return 2;
  }
  return withDatabase(env, io, (db) => tail(db, args, io));
}

function parseTail(argv: readonly string[]): TailArgs {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv.slice(1),
      options: { lines: { type: 'string' }, after: { type: 'string' }, follow: { type: 'boolean' } },
    });
  } catch (error) {
    return { ok: false, message: argumentProblem(error) };
  }
  const { lines, after, follow } = parsed.values;
  const count = (text: unknown, name: string, min: number) => {
    if (text === undefined) return undefined;
    const n = Number(text);
    return Number.isSafeInteger(n) && n >= min && /^\d+$/.test(String(text))
      ? n
      : `${name} must be a whole number`;
  };
  const n = count(lines, '--lines', 0) ?? 10;
  const a = count(after, '--after', 0);
  if (typeof n === 'string') return { ok: false, message: n };
  if (typeof a === 'string') return { ok: false, message: a };
  return { ok: true, lines: n, after: a, follow: follow === true };
}

async function tail(db: SqlDatabase, args: Extract<TailArgs, { ok: true }>, io: FollowIo): Promise<number> {
  let seq = args.after ?? Math.max(0, (await auditHeadSeq(db)) - args.lines);
  for (;;) {
    const rows = await auditEventsAfter(db, seq, PAGE);
    for (const line of formatEvents(rows, 'jsonl')) io.out(line);
    seq = rows.at(-1)?.seq ?? seq;
    if (rows.length === PAGE) continue;
    if (!args.follow || io.signal?.aborted) return 0;
    await pause(io.pollMs ?? 1000, io.signal);
    if (io.signal?.aborted) return 0;
  }
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}
