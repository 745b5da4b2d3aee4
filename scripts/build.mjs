// Compiles src/ to dist/ (plain JavaScript, one file per source file) so `npm start` runs without a compiler in
// memory. Run by `npm ci` (the `prepare` script) and by `npm start` when the sources changed since the last
// build. `--if-stale` builds only then; the build is recorded by a hash of every source file.
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const dist = join(root, 'dist');
const stamp = join(dist, '.sources');

/** Every TypeScript source, in a stable order. */
function sources() {
  return readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .sort()
    .map((file) => join(src, file));
}

/** One hash over the sources' paths and contents: equal when nothing that the build reads changed. */
function sourceHash(files) {
  const hash = createHash('sha256');
  for (const file of files)
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  return hash.digest('hex');
}

/**
 * Holds dist.lock while `work` runs, so processes started together (after a deploy) build one at a time; a lock
 * left by a build that died is taken over after a minute.
 */
async function withBuildLock(work) {
  const lock = join(root, 'dist.lock');
  for (;;) {
    try {
      closeSync(openSync(lock, 'wx'));
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      if (Date.now() - statSync(lock, { throwIfNoEntry: false })?.mtimeMs > 60_000)
        rmSync(lock, { force: true });
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    return await work();
  } finally {
    rmSync(lock, { force: true });
  }
}

/** Builds dist/ unless `ifStale` and it is already built from these sources; resolves true when it built. */
export async function build({ ifStale = false } = {}) {
  const files = sources();
  const hash = sourceHash(files);
  const fresh = () => ifStale && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash;
  if (fresh()) return false;
  return withBuildLock(async () => {
    // Another process may have built it while this one waited for the lock.
    if (fresh()) return false;
    await compile(files, hash);
    return true;
  });
}

async function compile(files, hash) {
  // Loaded only to build: a start with an up-to-date build never loads the compiler.
  const esbuild = await import('esbuild');
  rmSync(dist, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: files,
    outdir: dist,
    outbase: src,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    logLevel: 'warning',
  });
  writeFileSync(stamp, hash);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const built = await build({ ifStale: process.argv.includes('--if-stale') });
  if (built) process.stdout.write(`Built ${relative(process.cwd(), dist) || 'dist'}/ from src/.\n`);
}
