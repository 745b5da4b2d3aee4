import { accessSync, constants, type Stats, statfsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type Database from 'better-sqlite3';
import { describeError } from '../../errors.js';
import type { DatabaseProbe } from '../sql/sql-database.js';

/** Less free space than this on the file's disk counts as full: a write would fail with SQLITE_FULL. */
const MIN_FREE_BYTES = 1024 * 1024;

/** How long the probe waits for another process's write lock before calling the database busy, not down. */
const PROBE_BUSY_MS = 100;

/**
 * Checks that the SQLite file at `path` can take a write now, without writing: the file opened is still the
 * one at `path` (a removed or replaced file would swallow every write, lost at the next start), the file and
 * its folder are writable (by their permissions, so a file made read-only counts even for root, who may still
 * write it), the disk has room, and `BEGIN IMMEDIATE` gets the write lock (a lock held by another writer beyond
 * a moment is busy, not a failure). A few system calls: cheap enough for every health check.
 */
export function createSqliteProbe(sqlite: Database.Database, path: string): () => DatabaseProbe {
  const file = path === ':memory:' ? undefined : resolve(path);
  const opened = file ? statSync(file) : undefined;
  return () => {
    if (!sqlite.open) return { ok: false, problem: 'closed' };
    if (file && opened) {
      const problem = fileProblem(file, opened);
      if (problem) return { ok: false, problem };
    }
    return writeLockProblem(sqlite);
  };
}

function fileProblem(file: string, opened: Stats): string | undefined {
  let now: Stats;
  try {
    now = statSync(file);
  } catch {
    return `the file ${file} (DATABASE_PATH) was removed: writes would be lost`;
  }
  if (now.ino !== opened.ino || now.dev !== opened.dev)
    return `the file ${file} (DATABASE_PATH) was replaced: writes would go to the old one`;
  if (!writable(file, now)) return `the file ${file} (DATABASE_PATH) is read-only`;
  const folder = dirname(file);
  if (!writable(folder, statSync(folder))) return `the folder of ${file} (DATABASE_PATH) is read-only`;
  const disk = statfsSync(folder);
  if (disk.bavail * disk.bsize < MIN_FREE_BYTES) return `the disk holding ${file} (DATABASE_PATH) is full`;
  return undefined;
}

/** Writable by this process, and by someone at all: no write bit means read-only, even to root. */
function writable(path: string, stats: Stats): boolean {
  if ((stats.mode & 0o222) === 0) return false;
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function writeLockProblem(sqlite: Database.Database): DatabaseProbe {
  const busyMs = Number(sqlite.pragma('busy_timeout', { simple: true }));
  sqlite.pragma(`busy_timeout = ${PROBE_BUSY_MS}`);
  try {
    sqlite.exec('BEGIN IMMEDIATE');
    sqlite.exec('ROLLBACK');
    return { ok: true };
  } catch (error) {
    if (sqlite.inTransaction) sqlite.exec('ROLLBACK');
    // Another process writing right now: the database works.
    if (error instanceof Error && 'code' in error && error.code === 'SQLITE_BUSY') return { ok: true };
    return { ok: false, problem: describeError(error) };
  } finally {
    sqlite.pragma(`busy_timeout = ${busyMs}`);
  }
}
