import { chmodSync, closeSync, existsSync, mkdirSync, openSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { type BetterSQLite3Database, drizzle } from 'drizzle-orm/better-sqlite3';
import { migrate } from 'drizzle-orm/better-sqlite3/migrator';
import { guardAuditEvents } from './audit-guard.js';
import * as schema from './schema.js';

export type Db = BetterSQLite3Database<typeof schema>;

export interface OpenDatabase {
  db: Db;
  isOpen(): boolean;
  close(): void;
}

/** The generated migrations, found from this file so the working directory does not matter. */
const MIGRATIONS = resolve(dirname(fileURLToPath(import.meta.url)), '../../drizzle');

/**
 * Opens (creating when needed, mode 0600) the SQLite file, sets WAL and a busy timeout, and applies every
 * migration. `:memory:` is accepted for tests.
 */
export function openDatabase(path: string): OpenDatabase {
  if (path !== ':memory:') {
    mkdirSync(dirname(resolve(path)), { recursive: true });
    if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
    chmodSync(path, 0o600);
  }
  const sqlite = new Database(path);
  // The busy timeout first: switching to WAL needs a lock that another process may be holding.
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('foreign_keys = ON');
  const db = drizzle(sqlite, { schema });
  migrate(db, { migrationsFolder: MIGRATIONS });
  guardAuditEvents(sqlite);
  return { db, isOpen: () => sqlite.open, close: () => sqlite.close() };
}
