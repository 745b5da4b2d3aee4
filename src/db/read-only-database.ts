import Database from 'better-sqlite3';
import { drizzle } from 'drizzle-orm/better-sqlite3';
import type { Db, OpenDatabase } from './database.js';
import * as schema from './schema.js';

/**
 * Opens an existing database for reading only: no migrations, no triggers, no file created, nothing written.
 * For the audit command line, which may be pointed at a copy kept as evidence. Throws when the file is absent.
 */
export function openDatabaseReadOnly(path: string): OpenDatabase {
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 5000');
  const db: Db = drizzle(sqlite, { schema });
  return { db, isOpen: () => sqlite.open, close: () => sqlite.close() };
}
