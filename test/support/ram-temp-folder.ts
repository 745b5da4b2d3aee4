import { accessSync, constants, mkdtempSync, rmSync, statfsSync } from 'node:fs';
import { join } from 'node:path';

/** Linux's RAM-backed folder, used when it has at least this much room. */
const RAM_FOLDER = '/dev/shm';
const ROOM_NEEDED = 512 * 1024 * 1024;

/**
 * The fast tier's global setup: the test processes' `TMPDIR` is a new folder in {@link RAM_FOLDER}, removed
 * with whatever the suites left in it when the run ends. Every SQLite file a suite opens lives in a temporary
 * folder and is thrown away, so, as with the PostgreSQL test server's `fsync=off`, syncing it to disk buys
 * nothing; on a disk each close of a SQLite file syncs it (its WAL checkpoint) and each removed folder unlinks
 * its files, some 1,400 fsyncs and 1,000 unlinks a run at milliseconds each on a virtual disk. Where the
 * folder is missing or small (macOS, a container's 64 MB `/dev/shm`) the system's temporary folder stays.
 */
export default function setup(): () => void {
  if (!hasRoom()) return () => {};
  const folder = mkdtempSync(join(RAM_FOLDER, 'bot-tests-'));
  const previous = process.env.TMPDIR;
  // The test processes are started with this process's environment, after the global setup.
  process.env.TMPDIR = folder;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(folder, { recursive: true, force: true });
  };
}

function hasRoom(): boolean {
  try {
    accessSync(RAM_FOLDER, constants.W_OK);
    const { bavail, bsize } = statfsSync(RAM_FOLDER);
    return bavail * bsize >= ROOM_NEEDED;
  } catch {
    return false;
  }
}
