import {
  chmodSync,
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  realpathSync,
  renameSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';

export type RestoreCheck =
  | { ok: true }
  | { ok: false; problem: 'no_backup' | 'same_file' | 'backup_has_wal' | 'no_target_folder' };

export type RestoreResult =
  | { ok: true; aside: { folder: string; files: string[] } | undefined }
  | { ok: false; problem: 'aside_exists' };

/** The side files SQLite keeps beside a database: they belong to it and move with it. */
const SIDE_FILES = ['-wal', '-shm', '-journal'];

/**
 * Whether the file `backup` can be restored in place of the database `target`: it exists, is not the database
 * itself, and is a single file (no `-wal` with content beside it, which a copy of the file alone would lose: a
 * file written by `npm run db -- backup` never has one).
 */
export function checkRestore(backup: string, target: string): RestoreCheck {
  if (!existsSync(backup)) return { ok: false, problem: 'no_backup' };
  if (existsSync(target) && realpathSync(target) === realpathSync(backup))
    return { ok: false, problem: 'same_file' };
  if ((statSync(`${backup}-wal`, { throwIfNoEntry: false })?.size ?? 0) > 0) {
    return { ok: false, problem: 'backup_has_wal' };
  }
  if (!existsSync(dirname(resolve(target)))) return { ok: false, problem: 'no_target_folder' };
  return { ok: true };
}

/**
 * Puts the SQLite file `backup` in place of the database `target`. The database and its side files, when
 * present, are first moved into a new folder beside it named after `now` (`bot.db.damaged-2026-05-04T10-00-00-000Z`),
 * so nothing is overwritten or lost and no stale `-wal` or `-shm` file is left to be read with the restored
 * file. The copy gets mode 0600, like the database. The caller has checked, with `checkRestore`, the backup
 * and, with `sqliteFileUse`, that no process has the database open.
 */
export async function restoreSqlite(backup: string, target: string, now: Date): Promise<RestoreResult> {
  const present = [target, ...SIDE_FILES.map((suffix) => `${target}${suffix}`)].filter((file) =>
    existsSync(file),
  );
  let aside: { folder: string; files: string[] } | undefined;
  if (present.length > 0) {
    const folder = join(
      dirname(target),
      `${basename(target)}.damaged-${now.toISOString().replace(/[:.]/g, '-')}`,
    );
    try {
      // Not recursive: an existing folder is an error, so an earlier restore's files are never mixed in.
      mkdirSync(folder, { mode: 0o700 });
    } catch (error) {
      if (error instanceof Error && 'code' in error && error.code === 'EEXIST')
        return { ok: false, problem: 'aside_exists' };
      throw error;
    }
    for (const file of present) renameSync(file, join(folder, basename(file)));
    aside = { folder, files: present.map((file) => basename(file)) };
  }
  // Created new ('wx', never over a database that appeared meanwhile) with mode 0600 from the start.
  await pipeline(createReadStream(backup), createWriteStream(target, { flags: 'wx', mode: 0o600 }));
  chmodSync(target, 0o600);
  return { ok: true, aside };
}
