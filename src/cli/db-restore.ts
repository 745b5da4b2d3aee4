import { verifyChain } from '../audit/verify-chain.js';
import { loadConfig } from '../config.js';
import { createAuditQueryStore } from '../db/audit-query-store.js';
import { sqliteFileUse } from '../db/sqlite/file-in-use.js';
import { checkRestore, restoreSqlite } from '../db/sqlite/restore.js';
import { openSqliteReadOnly } from '../db/sqlite/sqlite-database.js';
import { describeError } from '../errors.js';

/** Where the command writes: its report, and its problems. */
interface RestoreIo {
  out(line: string): void;
  err(line: string): void;
}

export interface RestoreOptions {
  from?: string | undefined;
  to?: string | undefined;
  botStopped?: boolean | undefined;
}

/** What to do instead of `restore` when the bot's database is PostgreSQL. */
const PG_RESTORE_ADVICE = `The database is PostgreSQL (DATABASE_URL): restore a pg_dump file with PostgreSQL's own tools, into an empty
database, with every bot process stopped:
  pg_restore --no-owner --dbname="$DATABASE_URL" bot-2026-05-04.dump
then check it with npm run audit -- verify (see docs/operations.md, "Backup and restore"). \`restore\` writes
SQLite files only.`;

/**
 * `npm run db -- restore --from BACKUP [--to FILE]`: checks the backup's audit chain, refuses while any process
 * has the database open, moves the database and its side files aside into a new folder, and copies the backup
 * in place (mode 0600). Returns the exit code: 0 restored, 1 the backup's chain does not verify or the restore
 * failed, 2 a usage problem or a refusal that changed nothing.
 */
export async function restoreCommand(
  options: RestoreOptions,
  env: NodeJS.ProcessEnv,
  io: RestoreIo,
): Promise<number> {
  const { from } = options;
  if (!from) {
    io.err('restore needs --from FILE (a backup written by npm run db -- backup). See npm run db -- --help.');
    return 2;
  }
  const loaded = loadConfig(env, 'audit');
  if (!options.to && loaded.ok && loaded.config.database.kind === 'postgres') {
    io.err(PG_RESTORE_ADVICE);
    return 2;
  }
  const target =
    options.to ??
    (loaded.ok && loaded.config.database.kind === 'sqlite' ? loaded.config.database.path : undefined);
  if (!target) {
    io.err('restore needs --to FILE (where the bot reads its SQLite database) or DATABASE_PATH.');
    return 2;
  }
  const check = checkRestore(from, target);
  if (!check.ok) {
    io.err(
      {
        no_backup: `No backup at ${from}.`,
        same_file: `${from} is the database itself: name the backup file with --from.`,
        backup_has_wal: `${from} has a ${from}-wal file with content beside it: it is a database in use or copied with cp, not a backup. Make one with npm run db -- backup --from ${from} --out NEW-FILE and restore that.`,
        no_target_folder: `The folder of ${target} does not exist.`,
      }[check.problem],
    );
    return 2;
  }
  const verified = await backupChain(from, io);
  if (verified !== 0) return verified;
  const use = sqliteFileUse(target);
  if (use.kind === 'held') {
    io.err(
      `${target} is in use by process ${use.pids.join(', ')} (the bot?): stop every bot process, then run restore again. Nothing was changed.`,
    );
    return 2;
  }
  if (use.kind === 'unknown' && !options.botStopped) {
    io.err(
      `Cannot tell whether the bot has ${target} open: ${use.reason}. Stop every bot process, then run again with --bot-stopped. Nothing was changed.`,
    );
    return 2;
  }
  try {
    const result = await restoreSqlite(from, target, new Date());
    if (!result.ok) {
      io.err(
        `A folder for the damaged files exists already beside ${target}: run restore again. Nothing was changed.`,
      );
      return 2;
    }
    if (result.aside) {
      io.out(`Moved the damaged database aside to ${result.aside.folder}: ${result.aside.files.join(', ')}.`);
    } else io.out(`There was no database at ${target}: nothing to move aside.`);
    io.out(`Restored ${from} to ${target} (mode 0600). Start the bot.`);
    return 0;
  } catch (error) {
    io.err(`Not restored: ${describeError(error)}`);
    return 1;
  }
}

/** The backup's audit chain, checked before anything is moved: 0 when it verifies. */
async function backupChain(from: string, io: RestoreIo): Promise<number> {
  let backup: ReturnType<typeof openSqliteReadOnly>;
  try {
    backup = openSqliteReadOnly(from);
  } catch (error) {
    io.err(`${from} cannot be opened as a SQLite database (${describeError(error)}). Nothing was changed.`);
    return 1;
  }
  try {
    const verdict = verifyChain(await createAuditQueryStore(backup).chain());
    if (!verdict.ok) {
      io.err(
        `The backup's audit chain is broken at event ${verdict.seq}: ${verdict.message}. Not restored; nothing was changed (choose another backup).`,
      );
      return 1;
    }
    io.out(`Audit chain of the backup: ${verdict.count} events, intact (head ${verdict.headHash}).`);
    return 0;
  } catch (error) {
    io.err(`${from} cannot be read as the bot's database (${describeError(error)}). Nothing was changed.`);
    return 1;
  } finally {
    await backup.close();
  }
}
