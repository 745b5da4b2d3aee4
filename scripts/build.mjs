// Compiles src/ to dist/ (plain JavaScript, one file per source file) so `npm start` runs without a compiler in
// memory. Run by `npm ci` (the `prepare` script) and by `npm start` when the sources changed since the last
// build. `--if-stale` builds only then; the build is recorded by a hash of every source file.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** Builds dist/ unless `ifStale` and it is already built from these sources; resolves true when it built. */
export async function build({ ifStale = false } = {}) {
  const files = sources();
  const hash = sourceHash(files);
  if (ifStale && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) return false;
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
  return true;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const built = await build({ ifStale: process.argv.includes('--if-stale') });
  if (built) process.stdout.write(`Built ${relative(process.cwd(), dist) || 'dist'}/ from src/.\n`);
}
