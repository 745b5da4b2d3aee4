import { copyFileSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';

let template: Promise<string> | undefined;

/**
 * Puts a migrated SQLite database at `path` unless a file is already there: a copy of one this test process
 * migrated once, instead of migrating every new file (about 10 ms each, hundreds of times a run). Opening it
 * as the bot does still applies whatever is missing, and sets WAL and the triggers.
 */
export async function placeMigratedSqlite(path: string): Promise<void> {
  if (path === ':memory:' || existsSync(path)) return;
  template ??= migrateTemplate();
  copyFileSync(await template, path);
}

async function migrateTemplate(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'bot-template-'));
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  const path = join(dir, 'bot.db');
  await openSqliteDatabase(path).close();
  return path;
}
