import { existsSync } from 'node:fs';
import { type DatabaseConfig, loadConfig } from '../config.js';
import { describeDatabase, openDatabaseReadOnly } from '../db/open-database.js';
import type { SqlDatabase } from '../db/sql/sql-database.js';
import { describeError } from '../errors.js';
import type { CliIo } from './audit-io.js';

/**
 * The database named by the environment; undefined (the problem told) when the configuration is wrong or the
 * SQLite file is missing.
 */
export function databaseOf(env: NodeJS.ProcessEnv, io: CliIo): DatabaseConfig | undefined {
  const loaded = loadConfig(env, 'audit');
  if (!loaded.ok) {
    io.err(`Configuration error:\n${loaded.problems.map((p) => `  - ${p}`).join('\n')}`);
    return undefined;
  }
  const where = loaded.config.database;
  if (where.kind === 'sqlite' && !existsSync(where.path)) {
    io.err(`No database at ${where.path}. Set DATABASE_PATH to the bot's SQLite file, or DATABASE_URL.`);
    return undefined;
  }
  return where;
}

/** Reads the database named by the environment, read-only; 2 when it is missing or not the bot's. */
export async function withDatabase(
  env: NodeJS.ProcessEnv,
  io: CliIo,
  work: (db: SqlDatabase) => Promise<number>,
): Promise<number> {
  const where = databaseOf(env, io);
  if (!where) return 2;
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
