// Compiles src/ to dist/ (plain JavaScript, one file per source file) so `npm start` runs without a compiler in
// memory; the bot's two entry points (dist/main.js and the worker thread's dist/worker-thread.js) are then
// bundled with their dependencies, minified, so each thread parses and keeps in memory far less code. Run by
// `npm ci` (the `prepare` script) and by `npm start` when the sources or this script changed since the last
// build. `--if-stale` builds only then; the build is recorded by a hash of every source file and this script.
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
import { dirname, join, relative, sep } from 'node:path';
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

/**
 * One hash over the sources' paths and contents, and this script's: equal when nothing that the build reads or
 * does changed.
 */
function sourceHash(files) {
  const hash = createHash('sha256')
    .update(readFileSync(fileURLToPath(import.meta.url)))
    .update('\0');
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
  await bundleBot(esbuild);
  writeFileSync(stamp, hash);
}

/**
 * Replaces dist/main.js, the bot's entry, with a bundle of everything it loads (but better-sqlite3 and pg, which
 * load native code or optional modules), minified: the intake thread and each worker thread hold every module's
 * source text in memory, and many small modules cost more than one. The worker thread's code goes to
 * dist/worker-thread.js, the file the worker pool starts. Code both threads
 * run and code loaded on first use (the model client, MCP, OpenTelemetry) go to shared chunks beside them, so
 * every output file is in dist/ itself; there `import.meta.url` is given each source file's own compiled path, so
 * paths relative to a source file (the migrations, the worker entry) stay what they are in the per-file build.
 */
async function bundleBot(esbuild) {
  const ownUrl = {
    name: 'own-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.js$/ }, (args) => {
        if (!args.path.startsWith(dist)) return undefined;
        const contents = readFileSync(args.path, 'utf8');
        if (!contents.includes('import.meta.url')) return undefined;
        const own = JSON.stringify(`./${relative(dist, args.path).split(sep).join('/')}`);
        return {
          contents: contents.replaceAll('import.meta.url', `new URL(${own}, import.meta.url).href`),
          loader: 'js',
        };
      });
    },
  };
  await esbuild.build({
    entryPoints: { main: join(dist, 'main.js'), 'worker-thread': join(dist, 'worker-thread.js') },
    outdir: dist,
    allowOverwrite: true,
    bundle: true,
    splitting: true,
    chunkNames: 'chunk-[hash]',
    format: 'esm',
    platform: 'node',
    target: 'node20',
    // Whitespace and syntax only: names stay, as error names are read (`this.name = new.target.name`) and logged.
    minifyWhitespace: true,
    minifySyntax: true,
    external: ['better-sqlite3', 'pg', 'pg-native'],
    // Dependencies written as CommonJS call require(), which an ES module does not have.
    banner: {
      js: "import{createRequire as __ownRequire}from'node:module';const require=__ownRequire(import.meta.url);",
    },
    plugins: [ownUrl],
    logLevel: 'warning',
  });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const built = await build({ ifStale: process.argv.includes('--if-stale') });
  if (built) process.stdout.write(`Built ${relative(process.cwd(), dist) || 'dist'}/ from src/.\n`);
}
