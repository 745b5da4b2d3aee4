import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatEvents } from '../audit/audit-export.js';
import { loadConfig } from '../config.js';
import { auditEventsAfter, auditHeadSeq } from '../db/audit-push-store.js';
import { describeDatabase, openDatabaseReadOnly } from '../db/open-database.js';
import type { SqlDatabase } from '../db/sql/sql-database.js';
import { describeError } from '../errors.js';

/** Where the commands write (as audit-cli.ts's `CliIo`). */
interface CliIo {
  out(line: string): void;
  err(line: string): void;
  now(): number;
}

/** What `tail --follow` also needs: when to stop (the command line stops on a signal) and how often to look. */
export interface FollowIo extends CliIo {
  signal?: AbortSignal;
  pollMs?: number;
}

export const EXTRA_USAGE = `  tail [--lines N] [--after SEQ] [--follow]
                         the newest events as JSON lines (default 10; --after: every event after SEQ);
                         --follow keeps printing new events as they are written (for Vector, Fluent Bit)`;

/** The commands this module answers; the others are audit-cli.ts's. */
export function isExtraCommand(argv: readonly string[]): boolean {
  return argv[0] === 'tail';
}

type Parsed =
  | { ok: true; lines: number; after: number | undefined; follow: boolean }
  | { ok: false; message: string };

function parseTail(argv: readonly string[]): Parsed {
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv.slice(1),
      options: { lines: { type: 'string' }, after: { type: 'string' }, follow: { type: 'boolean' } },
    });
  } catch (error) {
    return { ok: false, message: describeError(error).replace(/^TypeError( \[\w+\])?: /, '') };
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

/** Runs `tail`; returns the exit code (0 done, 2 usage or configuration problem). */
export async function runExtraCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: FollowIo,
  usage: string,
): Promise<number> {
  const args = parseTail(argv);
  if (!args.ok) {
    io.err(`${args.message}\n\n${usage}`);
    return 2;
  }
  return withDatabase(env, io, (db) => tail(db, args, io));
}

/** Reads the database named by the environment, read-only; 2 when it is missing or not the bot's. */
export async function withDatabase(
  env: NodeJS.ProcessEnv,
  io: CliIo,
  work: (db: SqlDatabase) => Promise<number>,
): Promise<number> {
  const loaded = loadConfig(env, 'audit');
  if (!loaded.ok) {
    io.err(`Configuration error:\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}`);
    return 2;
  }
  const where = loaded.config.database;
  if (where.kind === 'sqlite' && !existsSync(where.path)) {
    io.err(`No database at ${where.path}. Set DATABASE_PATH to the bot's SQLite file, or DATABASE_URL.`);
    return 2;
  }
  let database: SqlDatabase;
  try {
    database = await openDatabaseReadOnly(where);
  } catch (error) {
    io.err(`Cannot open ${describeDatabase(where)}: ${describeError(error)}`);
    return 2;
  }
  try {
    return await work(database);
  } catch (error) {
    if (!/no such table|does not exist/.test(describeError(error))) throw error;
    io.err(
      `${describeDatabase(where)} has no audit log: it is not the bot's database, or the bot never started on it.`,
    );
    return 2;
  } finally {
    await database.close();
  }
}

const PAGE = 500;

async function tail(db: SqlDatabase, args: Extract<Parsed, { ok: true }>, io: FollowIo): Promise<number> {
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
