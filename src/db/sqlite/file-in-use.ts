import { readFileSync, statSync } from 'node:fs';

/**
 * Whether some process has the SQLite file open, as the kernel's lock table tells it:
 * `held` with the pids, `free`, or `unknown` where the system keeps no such table.
 */
export type FileUse =
  | { kind: 'held'; pids: number[] }
  | { kind: 'free' }
  | { kind: 'unknown'; reason: string };

const LOCK_TABLE = '/proc/locks';

/**
 * Every open connection to a SQLite database in WAL mode (the bot's, in every thread and process) holds a
 * shared POSIX lock on the database file and on its `-shm` file for as long as it is open, and the kernel drops
 * them when the process ends, even by SIGKILL. Linux lists every such lock in `/proc/locks` (device and inode
 * of the file, and the pid): reading it tells whether the file is in use without opening the database, so
 * nothing in it is changed (a SQLite connection opened to try for an exclusive lock would checkpoint the
 * damaged file's WAL when closed). Processes of another pid namespace (another container) are not listed.
 */
export function sqliteFileUse(path: string, lockTable = LOCK_TABLE): FileUse {
  let table: string;
  try {
    table = readFileSync(lockTable, 'utf8');
  } catch {
    return { kind: 'unknown', reason: `${lockTable} cannot be read (not Linux?)` };
  }
  const files = new Set<string>();
  for (const file of [path, `${path}-shm`, `${path}-wal`]) {
    const id = fileId(file);
    if (id !== undefined) files.add(id);
  }
  const pids = new Set<number>();
  for (const line of table.split('\n')) {
    // "1: POSIX  ADVISORY  READ 6549 fe:00:2147340 1073741826 1073742335"; blocked waiters start with "->".
    const fields = line.trim().split(/\s+/);
    const at = fields.findIndex((field) => /^[0-9a-f]+:[0-9a-f]+:\d+$/.test(field));
    if (at < 1 || !files.has(fields[at] ?? '')) continue;
    const pid = Number(fields[at - 1]);
    if (Number.isInteger(pid) && pid > 0) pids.add(pid);
  }
  return pids.size > 0 ? { kind: 'held', pids: [...pids].sort((a, b) => a - b) } : { kind: 'free' };
}

/** `major:minor:inode` as `/proc/locks` writes it (major and minor in hex), or undefined for a missing file. */
function fileId(path: string): string | undefined {
  const stats = statSync(path, { bigint: true, throwIfNoEntry: false });
  if (stats === undefined) return undefined;
  const dev = stats.dev;
  // Linux's encoding of a device number (glibc's gnu_dev_major and gnu_dev_minor).
  const major = ((dev >> 8n) & 0xfffn) | ((dev >> 32n) & ~0xfffn);
  const minor = (dev & 0xffn) | ((dev >> 12n) & ~0xffn);
  return `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${stats.ino}`;
}
