import { existsSync } from 'node:fs';
import { type Config, loadConfig } from '../config.js';
import { describeDatabase, openDatabaseReadOnly } from '../db/open-database.js';
import type { SqlDatabase } from '../db/sql/sql-database.js';
import { describeError } from '../errors.js';

/** Where a command tells what is wrong. */
interface ProblemOutput {
  err(line: string): void;
}

/**
 * The configuration the environment names, for a command that reads the bot's database; undefined (the problem
 * told) when the configuration is wrong or the SQLite file is missing.
 */
export function databaseConfigOf(env: NodeJS.ProcessEnv, io: ProblemOutput): Config | undefined {
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
  return loaded.config;
}

/**
 * Runs `work` on the database named by the environment, opened read-only, and closes it. Exits 2, the problem
 * told in one sentence, when the database is missing, cannot be opened or has no audit log (not the bot's, or
 * the bot never started on it).
 */
export async function withDatabase(
  env: NodeJS.ProcessEnv,
  io: ProblemOutput,
  work: (db: SqlDatabase, config: Config) => Promise<number>,
): Promise<number> {
  const config = databaseConfigOf(env, io);
  if (!config) return 2;
  const where = config.database;
  let database: SqlDatabase;
  try {
    database = await openDatabaseReadOnly(where);
  } catch (error) {
    io.err(`Cannot open ${describeDatabase(where)}: ${describeError(error)}`);
    return 2;
  }
  try {
    return await work(database, config);
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
