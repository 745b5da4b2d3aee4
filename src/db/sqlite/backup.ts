import { chmodSync, existsSync, realpathSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import Database from 'better-sqlite3';

export type BackupResult =
  | { ok: true; pages: number }
  | { ok: false; problem: 'no_source' | 'target_exists' | 'same_file' | 'no_target_folder' };

/** Pages copied per step after the first: all of them, so the copy is one consistent snapshot. */
const ALL_PAGES = 0x7fffffff;

/**
 * Copies the SQLite database `from` into a new file `to` with SQLite's online backup API (better-sqlite3's
 * `backup`), while the bot may be running and writing: the copy is one consistent snapshot, as of a moment
 * during the call (committed transactions only, WAL content included). The copy gets mode 0600, like the
 * database. Never overwrites a file.
 */
export async function backupSqlite(from: string, to: string): Promise<BackupResult> {
  if (!existsSync(from)) return { ok: false, problem: 'no_source' };
  if (existsSync(to)) {
    return realpathSync(to) === realpathSync(from)
      ? { ok: false, problem: 'same_file' }
      : { ok: false, problem: 'target_exists' };
  }
  if (!existsSync(dirname(resolve(to)))) return { ok: false, problem: 'no_target_folder' };
  const source = new Database(from, { readonly: true, fileMustExist: true });
  try {
    // A writer holding the lock makes a step wait for it rather than fail.
    source.pragma('busy_timeout = 5000');
    const result = await source.backup(to, { progress: () => ALL_PAGES });
    chmodSync(to, 0o600);
    return { ok: true, pages: result.totalPages };
  } finally {
    source.close();
  }
}
