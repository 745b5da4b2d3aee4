import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { verifyChain } from '../audit/verify-chain.js';
import { loadConfig } from '../config.js';
import { createAuditQueryStore } from '../db/audit-query-store.js';
import { copyDatabase } from '../db/copy-database.js';
import { describeDatabase } from '../db/open-database.js';
import { openPostgresDatabase } from '../db/postgres/postgres-database.js';
import { type BackupResult, backupSqlite } from '../db/sqlite/backup.js';
import { openSqliteReadOnly } from '../db/sqlite/sqlite-database.js';
import { describeError } from '../errors.js';
import { argumentProblem } from './argument-problem.js';
import { adminsCommand } from './db-admins.js';
import { restoreCommand } from './db-restore.js';
import { rotateTokenKeyCommand } from './db-rotate.js';

export interface DbCliIo {
  out(line: string): void;
  err(line: string): void;
}

export const DB_USAGE = `Usage: npm run db -- backup --out FILE [--from FILE]
       npm run db -- restore --from FILE [--to FILE] [--bot-stopped]
       npm run db -- copy --to postgres://USER:PASSWORD@HOST/DATABASE [--from FILE]
       npm run db -- rotate-token-key
       npm run db -- admins --team T… [--enterprise E…] [--add U… | --remove U…]

Commands:
  backup    writes a consistent copy of the SQLite database (--from, default DATABASE_PATH) to a new file
            (--out), while the bot runs (SQLite's online backup), then checks the copy's audit chain.
            For PostgreSQL use pg_dump (see docs/operations.md).
  restore   puts a backup (--from) in place of the SQLite database (--to, default DATABASE_PATH): checks the
            backup's audit chain first, refuses while any process has the database open (the bot: stop it
            first), moves the database and its -wal and -shm files into a new folder beside it
            (bot.db.damaged-<time>), then copies the backup in with mode 0600. --bot-stopped: where the system
            cannot tell whether the file is open (no /proc/locks), you say the bot is stopped.
            For PostgreSQL use pg_restore.
  copy      copies every row of the SQLite database (--from, default DATABASE_PATH) into an empty PostgreSQL
            database (--to), creating its tables first; the audit chain is copied unchanged, so
            \`npm run audit -- verify\` prints the same head on both. Stop the bot while copying.
  rotate-token-key
            installs into several workspaces: seals every stored Slack token again with TOKEN_ENCRYPTION_KEY
            (the new key), reading those sealed with TOKEN_ENCRYPTION_KEY_PREVIOUS (the old one); once it
            reports every token on the current key, unset TOKEN_ENCRYPTION_KEY_PREVIOUS.
  admins    installs into several workspaces: lists a workspace's admins (--team), or adds or removes one
            (--add, --remove), audited with actor operator. A workspace's admins are its installer until
            the list is first changed; its last admin cannot be removed. On Enterprise Grid, --enterprise
            names the workspace's organisation: who installed the app for the whole organisation is then
            the installer of a workspace with no install of its own.

Exit codes: 0 done, 1 the backup, restore, copy or re-sealing failed (a copy's target is left as it is: empty it before
trying again; a backup whose chain does not verify is not restored), 2 usage or configuration problem, or a
refusal that changed nothing.`;

/** The one line after a usage problem: the full usage is one flag away. */
const SEE_HELP = 'See npm run db -- --help.';

/** What to do instead of \`backup\` when the bot's database is PostgreSQL. */
const PG_DUMP_ADVICE = `The database is PostgreSQL (DATABASE_URL): back it up with PostgreSQL's own tools while the bot runs, e.g.
  pg_dump --format=custom --file=bot-$(date +%F).dump "$DATABASE_URL"
and restore into an empty database with
  pg_restore --no-owner --dbname="$DATABASE_URL" bot-2026-05-04.dump
(see docs/operations.md, "Backup and restore"). \`backup\` copies SQLite files only.`;

const OPTIONS = {
  to: { type: 'string' },
  from: { type: 'string' },
  out: { type: 'string' },
  'bot-stopped': { type: 'boolean' },
  team: { type: 'string' },
  enterprise: { type: 'string' },
  add: { type: 'string' },
  remove: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** `npm run db -- backup|restore|copy|rotate-token-key|admins|help`. Returns the exit code. */
export async function runDbCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: DbCliIo,
): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>;
  try {
    parsed = parseArgs({ args: [...argv], allowPositionals: true, options: OPTIONS });
  } catch (error) {
    io.err(`${argumentProblem(error)}\n${SEE_HELP}`);
    return 2;
  }
  const [command] = parsed.positionals;
  if (command === 'help' || parsed.values.help) {
    io.out(DB_USAGE);
    return 0;
  }
  if (command === undefined) {
    io.err(`Name a command: backup, restore, copy, rotate-token-key or admins.\n${SEE_HELP}`);
    return 2;
  }
  if (
    parsed.positionals.length > 1 ||
    !['backup', 'restore', 'copy', 'rotate-token-key', 'admins'].includes(command)
  ) {
    io.err(`Unknown command: ${parsed.positionals.join(' ')}\n${SEE_HELP}`);
    return 2;
  }
  if (command === 'backup') return backupCommand(parsed.values, env, io);
  if (command === 'rotate-token-key') return rotateTokenKeyCommand(env, io);
  if (command === 'admins') return adminsCommand(parsed.values, env, io);
  if (command === 'restore') {
    const { from, to, 'bot-stopped': botStopped } = parsed.values;
    return restoreCommand({ from, to, botStopped }, env, io);
  }
  const to = parsed.values.to;
  if (!to || !/^postgres(ql)?:\/\/\S+$/.test(to)) {
    io.err(
      `copy needs --to with a PostgreSQL URL such as postgres://bot:secret@db.example.com/bot\n${SEE_HELP}`,
    );
    return 2;
  }
  const loaded = loadConfig(env, 'audit');
  const from =
    parsed.values.from ??
    (loaded.ok && loaded.config.database.kind === 'sqlite' ? loaded.config.database.path : undefined);
  if (!from) {
    io.err('copy needs --from FILE (the SQLite database) or DATABASE_PATH.');
    return 2;
  }
  if (!existsSync(from)) {
    io.err(`No database at ${from}.`);
    return 2;
  }
  return copy(from, to, io);
}

async function backupCommand(
  values: { from?: string | undefined; out?: string | undefined },
  env: NodeJS.ProcessEnv,
  io: DbCliIo,
): Promise<number> {
  if (!values.out) {
    io.err(`backup needs --out FILE (a new file)\n${SEE_HELP}`);
    return 2;
  }
  const loaded = loadConfig(env, 'audit');
  if (!values.from && loaded.ok && loaded.config.database.kind === 'postgres') {
    io.err(PG_DUMP_ADVICE);
    return 2;
  }
  const from =
    values.from ??
    (loaded.ok && loaded.config.database.kind === 'sqlite' ? loaded.config.database.path : undefined);
  if (!from) {
    io.err('backup needs --from FILE (the SQLite database) or DATABASE_PATH.');
    return 2;
  }
  let result: BackupResult;
  try {
    result = await backupSqlite(from, values.out);
  } catch (error) {
    io.err(`Not backed up: ${describeError(error)}`);
    return 1;
  }
  if (!result.ok) {
    const why = {
      no_source: `No database at ${from}.`,
      target_exists: `${values.out} exists already: choose a new file name (a backup never overwrites a file).`,
      same_file: `${values.out} is the database itself: choose a new file name.`,
      no_target_folder: `The folder of ${values.out} does not exist.`,
    }[result.problem];
    io.err(why);
    return 2;
  }
  io.out(`Backed up SQLite ${from} to ${values.out} (${result.pages} pages, a consistent snapshot).`);
  // The copy is checked as a restore would use it: it opens, and its audit chain verifies.
  const copy = openSqliteReadOnly(values.out);
  try {
    const verdict = verifyChain(await createAuditQueryStore(copy).chain());
    if (!verdict.ok) {
      io.err(
        `The copy's audit chain is broken at event ${verdict.seq}: ${verdict.message} (run npm run audit -- verify on the database too).`,
      );
      return 1;
    }
    io.out(`Audit chain of the copy: ${verdict.count} events, intact (head ${verdict.headHash}).`);
    return 0;
  } finally {
    await copy.close();
  }
}

async function copy(from: string, to: string, io: DbCliIo): Promise<number> {
  const target = { kind: 'postgres' as const, url: to, poolSize: 2 };
  const source = openSqliteReadOnly(from);
  try {
    const destination = await openPostgresDatabase(to, { poolSize: 2 });
    try {
      const result = await copyDatabase(source, destination);
      if (!result.ok) {
        io.err(`Not copied: ${result.problem}.`);
        return 1;
      }
      const total = result.report.tables.reduce((sum, table) => sum + table.rows, 0);
      io.out(`Copied ${total} rows from SQLite ${from} to ${describeDatabase(target)}:`);
      for (const { table, rows } of result.report.tables) io.out(`  ${table}: ${rows}`);
      io.out(`Audit chain head on both: ${result.report.auditHead ?? '(empty log)'}`);
      return 0;
    } finally {
      await destination.close();
    }
  } catch (error) {
    io.err(`Not copied: ${describeError(error)}`);
    return 1;
  } finally {
    await source.close();
  }
}
