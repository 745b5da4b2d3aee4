import { createPublicKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { formatEvents } from '../audit/audit-export.js';
import { checkCheckpoints, describeCheckpointProblem, keyId } from '../audit/checkpoint.js';
import { describePruneReport } from '../audit/retention.js';
import { parseTimePoint } from '../audit/time-filter.js';
import { formatUsageTable, USAGE_GROUPS, type UsageGroup, usageBy, usageTotals } from '../audit/usage.js';
import { type ChainVerdict, verifyChain } from '../audit/verify-chain.js';
import { auditEventsAfter, auditHeadSeq } from '../db/audit-push-store.js';
import { createAuditQueryStore } from '../db/audit-query-store.js';
import { createCheckpointStore } from '../db/checkpoint-store.js';
import { openDatabase } from '../db/open-database.js';
import { createRetentionStore } from '../db/retention-store.js';
import type { SqlDatabase } from '../db/sql/sql-database.js';
import { readRunUsage, type UsageFilter } from '../db/usage-queries.js';
import { describeError } from '../errors.js';
import { randomId } from '../ids.js';
import { silentLogger } from '../logger.js';
import { ownerIsGone, processOwnerId } from '../process-identity.js';
import { databaseConfigOf, withDatabase } from './audit-database.js';

/** Where the audit commands write. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  now(): number;
}

/** What `tail --follow` also needs: when to stop (the command line stops on a signal) and how often to look. */
export interface FollowIo extends CliIo {
  signal?: AbortSignal;
  pollMs?: number;
}

export const EXTRA_USAGE = `  prune --before 90d|2026-03-01
                         remove conversation content older than that (history, arguments, results, reasons;
                         audit payloads keep digests, so verify still passes); writes to the database
  verify --public-key FILE
                         also check every signed checkpoint (AUDIT_SIGNING_KEY's public key, PEM): a log cut
                         off or re-chained after a checkpoint is reported with that checkpoint (exit 1)
  usage [--since 30d] [--until …] [--team T…] [--by user|tool|team] [--format table|jsonl]
                         the model's tokens over the runs that ended in the window (default: 30 days, by user)
  tail [--lines N] [--after SEQ] [--follow]
                         the newest events as JSON lines (default 10; --after: every event after SEQ);
                         --follow keeps printing new events as they are written (for Vector, Fluent Bit)`;

/** The commands this module answers; the others are audit-cli.ts's. */
export function isExtraCommand(argv: readonly string[]): boolean {
  return (
    argv[0] === 'tail' ||
    argv[0] === 'usage' ||
    argv[0] === 'prune' ||
    (argv[0] === 'verify' && argv.some((arg) => arg === '--public-key' || arg.startsWith('--public-key=')))
  );
}

type Parsed =
  | { ok: true; lines: number; after: number | undefined; follow: boolean }
  | { ok: false; message: string };

type UsageArgs =
  | { ok: true; filter: UsageFilter; by: UsageGroup; format: 'table' | 'jsonl' }
  | { ok: false; message: string };

const DEFAULT_USAGE_WINDOW = '30d';

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
    return { ok: false, message: describeError(error).replace(/^TypeError( \[\w+\])?: /, '') };
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

/** Runs `tail`, `usage`, `prune` or `verify --public-key`; returns the exit code (0 done, 1 chain or checkpoint broken, 2 usage or configuration problem). */
export async function runExtraCommand(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: FollowIo,
  seeHelp: string,
): Promise<number> {
  if (argv[0] === 'verify') {
    const key = readPublicKey(argv);
    if (!key.ok) {
      io.err(`${key.message}\n${seeHelp}`);
      return 2;
    }
    return withDatabase(env, io, (db) => verifyWithCheckpoints(db, key.key, io));
  }
  if (argv[0] === 'prune') return prune(argv, env, io, seeHelp);
  if (argv[0] === 'usage') {
    const args = parseUsage(argv, io.now());
    if (!args.ok) {
      io.err(`${args.message}\n${seeHelp}`);
      return 2;
    }
    return withDatabase(env, io, async (db) => {
      const runs = await db.read(() => readRunUsage(db.dialect, args.filter));
      const lines = usageBy(runs, args.by);
      const out =
        args.format === 'jsonl'
          ? lines.map((line) => JSON.stringify({ [args.by]: line.key, ...line, key: undefined }))
          : formatUsageTable(lines, usageTotals(runs), args.by);
      for (const line of out) io.out(line);
      return 0;
    });
  }
  const args = parseTail(argv);
  if (!args.ok) {
    io.err(`${args.message}\n${seeHelp}`);
    return 2;
  }
  return withDatabase(env, io, (db) => tail(db, args, io));
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

function readPublicKey(
  argv: readonly string[],
): { ok: true; key: KeyObject } | { ok: false; message: string } {
  let file: string | undefined;
  try {
    const parsed = parseArgs({ args: argv.slice(1), options: { 'public-key': { type: 'string' } } });
    file = parsed.values['public-key'];
  } catch (error) {
    return { ok: false, message: describeError(error).replace(/^TypeError( \[\w+\])?: /, '') };
  }
  if (!file) return { ok: false, message: '--public-key needs a file' };
  let pem: string;
  try {
    pem = readFileSync(file, 'utf8');
  } catch {
    return { ok: false, message: `Cannot read the public key ${file}` };
  }
  try {
    const key = createPublicKey(pem);
    if (key.asymmetricKeyType !== 'ed25519') {
      return {
        ok: false,
        message: `${file} holds a ${key.asymmetricKeyType} key; checkpoints are signed with Ed25519`,
      };
    }
    return { ok: true, key };
  } catch {
    return {
      ok: false,
      message: `${file} is not a public key in PEM (openssl pkey -in private.pem -pubout)`,
    };
  }
}

/** Prints what `verify` found in the chain: its head when intact, else the first broken event. */
export function tellVerdict(verdict: ChainVerdict, io: CliIo): void {
  if (verdict.ok) io.out(`${verdict.count} events, chain intact (head ${verdict.headHash})`);
  else io.err(`Chain broken at event ${verdict.seq} (${verdict.count} events read): ${verdict.message}`);
}

/** The chain, then every checkpoint against it; exit 1 when either fails. */
async function verifyWithCheckpoints(db: SqlDatabase, publicKey: KeyObject, io: CliIo): Promise<number> {
  const chain = await createAuditQueryStore(db).chain();
  const verdict = verifyChain(chain);
  tellVerdict(verdict, io);
  const checkpoints = await createCheckpointStore(db).all();
  const report = checkCheckpoints(
    new Map(chain.map((event) => [event.seq, event.hash])),
    chain.at(-1)?.seq ?? 0,
    checkpoints,
    publicKey,
  );
  for (const problem of report.problems) io.err(describeCheckpointProblem(problem));
  if (report.checked === 0) {
    io.out('No signed checkpoints: the bot signs them when AUDIT_SIGNING_KEY is set.');
  } else if (report.problems.length === 0) {
    const latest = report.latest;
    io.out(
      `${report.checked} checkpoint${report.checked === 1 ? '' : 's'} verified (key ${keyId(publicKey)})${
        latest ? `; the latest certifies event ${latest.seq} (${new Date(latest.at).toISOString()})` : ''
      }; ${report.uncovered} event${report.uncovered === 1 ? '' : 's'} after it not yet covered`,
    );
  }
  return verdict.ok && report.problems.length === 0 ? 0 : 1;
}

/** `prune --before …`: the one command that writes; it opens the database as the bot does (migrating it). */
async function prune(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: CliIo,
  seeHelp: string,
): Promise<number> {
  let text: string | undefined;
  try {
    text = parseArgs({ args: argv.slice(1), options: { before: { type: 'string' } } }).values.before;
  } catch (error) {
    io.err(`${describeError(error).replace(/^TypeError( \[\w+\])?: /, '')}\n${seeHelp}`);
    return 2;
  }
  const now = io.now();
  const before = text === undefined ? undefined : parseTimePoint(text, now);
  if (text === undefined || before === undefined || before > now) {
    io.err(`prune needs --before with a span such as 90d or a past date such as 2026-03-01\n${seeHelp}`);
    return 2;
  }
  const config = databaseConfigOf(env, io);
  if (!config) return 2;
  const db = await openDatabase(config.database, silentLogger);
  try {
    const owner = processOwnerId();
    const retention = createRetentionStore({
      db,
      clock: { now: () => io.now() },
      newId: randomId,
      owner,
      leaseMs: 30_000,
      ownerIsGone: (other) => ownerIsGone(other, owner),
    });
    io.out(describePruneReport(await retention.prune(before, { at: now, limit: `--before ${text}` })));
    return 0;
  } finally {
    await db.close();
  }
}
