import type { DatabaseConfig } from '../config.js';
import { AppError } from '../errors.js';
import type { Logger } from '../logger.js';
import { databaseOpenProblem } from './database-problems.js';
import type { SqlDatabase } from './sql/sql-database.js';

// Each engine is loaded only when configured: a bot on SQLite never loads pg, and the other way round.
const sqlite = () => import('./sqlite/sqlite-database.js');
const postgres = () => import('./postgres/postgres-database.js');

/**
 * Opens the configured database and applies its migrations: PostgreSQL when `DATABASE_URL` is set, else the
 * SQLite file at `DATABASE_PATH`. A database that cannot be opened throws `database.unavailable`, its message
 * naming the setting and what to check (never the password).
 */
export async function openDatabase(config: DatabaseConfig, logger: Logger): Promise<SqlDatabase> {
  try {
    if (config.kind === 'sqlite') return (await sqlite()).openSqliteDatabase(config.path);
    return await (await postgres()).openPostgresDatabase(config.url, {
      poolSize: config.poolSize,
      onError: (error) =>
        logger.warn('database connection lost; it will be replaced', { error: error.message }),
    });
  } catch (error) {
    throw new AppError('database.unavailable', databaseOpenProblem(config, error), { cause: error });
  }
}

/** Opens the database for reading only (the audit command line): nothing is created, migrated or written. */
export async function openDatabaseReadOnly(config: DatabaseConfig): Promise<SqlDatabase> {
  if (config.kind === 'sqlite') return (await sqlite()).openSqliteReadOnly(config.path);
  return (await postgres()).openPostgresDatabase(config.url, { poolSize: 2, readOnly: true });
}

/** Where the database is, for logs and messages: never the password of a PostgreSQL URL. */
export function describeDatabase(config: DatabaseConfig): string {
  if (config.kind === 'sqlite') return `SQLite ${config.path}`;
  try {
    const url = new URL(config.url);
    return `PostgreSQL ${url.hostname}${url.port ? `:${url.port}` : ''}${url.pathname}`;
  } catch {
    return 'PostgreSQL';
  }
}
