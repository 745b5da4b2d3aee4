import { existsSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.js';
import { copyDatabase } from '../db/copy-database.js';
import { describeDatabase } from '../db/open-database.js';
import { openPostgresDatabase } from '../db/postgres/postgres-database.js';
import { openSqliteReadOnly } from '../db/sqlite/sqlite-database.js';
import { describeError } from '../errors.js';

export interface DbCliIo {
  out(line: string): void;
  err(line: string): void;
}

export const DB_USAGE = `Usage: npm run db -- copy --to postgres://USER:PASSWORD@HOST/DATABASE [--from FILE]

Commands:
  copy      copies every row of the SQLite database (--from, default DATABASE_PATH) into an empty PostgreSQL
            database (--to), creating its tables first; the audit chain is copied unchanged, so
            \`npm run audit -- verify\` prints the same head on both. Stop the bot while copying.

Exit codes: 0 copied, 1 the copy failed (the target is left as it is: empty it before trying again),
2 usage or configuration problem.`;

/** `npm run db -- copy`. Returns the exit code. */
export async function runDbCli(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  io: DbCliIo,
): Promise<number> {
  let parsed: ReturnType<
    typeof parseArgs<{
      options: { to: { type: 'string' }; from: { type: 'string' } };
      allowPositionals: true;
    }>
  >;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: { to: { type: 'string' }, from: { type: 'string' } },
    });
  } catch (error) {
    io.err(`${describeError(error).replace(/^TypeError( \[\w+\])?: /, '')}\n\n${DB_USAGE}`);
    return 2;
  }
  const [command] = parsed.positionals;
  if (command === 'help' || command === undefined) {
    (command ? io.out : io.err)(DB_USAGE);
    return command ? 0 : 2;
  }
  if (command !== 'copy' || parsed.positionals.length > 1) {
    io.err(`Unknown command: ${parsed.positionals.join(' ')}\n\n${DB_USAGE}`);
    return 2;
  }
  const to = parsed.values.to;
  if (!to || !/^postgres(ql)?:\/\/\S+$/.test(to)) {
    io.err(
      `copy needs --to with a PostgreSQL URL such as postgres://bot:secret@db.example.com/bot\n\n${DB_USAGE}`,
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
