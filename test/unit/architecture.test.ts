import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { build } from 'esbuild';
import { describe, expect, it } from 'vitest';

/** The core: plain TypeScript that talks to the outside only through the ports it owns (docs/architecture.md). */
const CORE = ['agent', 'approvals', 'audit', 'console', 'conversations', 'tools'];

/** Libraries of the outside world, each reached only through its adapter. */
const OUTSIDE_LIBRARIES =
  /^(openai|pg|better-sqlite3|drizzle-orm|drizzle-kit|@slack\/.+|@modelcontextprotocol\/.+|@opentelemetry\/.+|hono|@hono\/.+|playwright-core|gpt-tokenizer)(\/|$)/;

/** The one place each outside library may be imported from (a file, or a folder ending in `/`). */
const HOMES: readonly { library: RegExp; home: string }[] = [
  { library: /^openai(\/|$)/, home: 'model/openai/' },
  { library: /^gpt-tokenizer(\/|$)/, home: 'model/token-counter.ts' },
  { library: /^@opentelemetry\//, home: 'telemetry/otel.ts' },
  { library: /^@modelcontextprotocol\//, home: 'mcp/' },
  { library: /^(pg|better-sqlite3|drizzle-orm)(\/|$)/, home: 'db/' },
  { library: /^(hono|@hono\/.+)(\/|$)/, home: 'web/' },
];

/**
 * Each folder and the folders of this list it may import: conversations over the agent, the agent over approvals,
 * approvals over the audit log, so none imports another in a circle.
 */
const LAYERS: Record<string, readonly string[]> = {
  audit: [],
  approvals: ['audit'],
  agent: ['approvals', 'audit'],
  tools: ['agent'],
  mcp: ['agent'],
  conversations: ['agent', 'approvals', 'audit', 'tools'],
  console: ['approvals', 'audit'],
};

const SRC = new URL('../../src/', import.meta.url).pathname;

/** A module a file names: another source file (a path under src/, `.ts`) or a library (its import name). */
type Target = { file: string } | { library: string };

/**
 * Every module named in `source`: import and export declarations (`import type` and `export … from` too),
 * side-effect imports, `import()` and `require()`. Comments and strings that read like an import count as well,
 * which can only make the check stricter.
 */
function namedModules(source: string): string[] {
  const patterns = [
    /\bfrom\s*(['"])([^'"]+)\1/g,
    /\bimport\s*(['"])([^'"]+)\1/g,
    /\b(?:import|require)\s*\(\s*(['"`])([^'"`]+)\1\s*\)/g,
  ];
  return patterns.flatMap((pattern) => [...source.matchAll(pattern)].map((match) => match[2] ?? ''));
}

/** `import(x)` or `require(x)` of a computed name, which no reading of the text can check. */
const COMPUTED_IMPORT = /\b(?:import|require)\s*\((?!\s*(['"`])[^'"`$]+\1\s*\))/;

function sourceFiles(): string[] {
  return readdirSync(SRC, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts'))
    .map((file) => file.split('\\').join('/'))
    .sort();
}

function resolve(file: string, specifier: string): Target {
  if (!specifier.startsWith('.')) return { library: specifier };
  return { file: posix.join(dirname(file), specifier).replace(/\.js$/, '.ts') };
}

/** Every source file under src/ and the modules it names. */
function importGraph(): Map<string, Target[]> {
  return new Map(
    sourceFiles().map((file) => [
      file,
      namedModules(readFileSync(join(SRC, file), 'utf8')).map((specifier) => resolve(file, specifier)),
    ]),
  );
}

const folderOf = (file: string): string | undefined => (file.includes('/') ? file.split('/')[0] : undefined);
const describeTarget = (target: Target): string => ('file' in target ? target.file : target.library);

describe('architecture', () => {
  const graph = importGraph();

  it('reads every import form, and esbuild finds no import the reading missed', async () => {
    expect(
      namedModules(`import a from 'a'; import type { B } from "b"; export * from './c.js';
        export { d } from '../d.js'; import 'e'; const f = await import('f'); type G = import('g').G;
        const h = require(\`h\`);`),
    ).toEqual(['a', 'b', './c.js', '../d.js', 'e', 'f', 'g', 'h']);
    const files = [...graph.keys()];
    const { metafile } = await build({
      entryPoints: files.map((file) => join(SRC, file)),
      absWorkingDir: SRC,
      bundle: true,
      packages: 'external',
      metafile: true,
      write: false,
      splitting: true,
      format: 'esm',
      platform: 'node',
      outdir: 'out',
      logLevel: 'silent',
    });
    expect(Object.keys(metafile.inputs)).toHaveLength(files.length);
    const missed: string[] = [];
    for (const [input, { imports }] of Object.entries(metafile.inputs)) {
      const named = new Set((graph.get(input) ?? []).map(describeTarget));
      for (const each of imports) {
        const target = each.external ? each.path : each.path.replace(/\\/g, '/');
        if (!named.has(target)) missed.push(`${input} imports ${target}`);
      }
    }
    expect(missed).toEqual([]);
  });

  it('the core imports no outside library, no adapter and nothing that does, and loads no computed module', () => {
    const violations: string[] = [];
    const check = (file: string, why: string): void => {
      if (COMPUTED_IMPORT.test(readFileSync(join(SRC, file), 'utf8')))
        violations.push(`${file}${why} imports a computed module`);
      for (const target of graph.get(file) ?? []) {
        const name = describeTarget(target);
        if ('library' in target && OUTSIDE_LIBRARIES.test(name))
          violations.push(`${file}${why} imports ${name}`);
        if ('file' in target && !CORE.includes(folderOf(name) ?? '') && folderOf(name) !== undefined)
          violations.push(`${file}${why} imports ${name}, which is not core`);
      }
    };
    // Files at the top of src/ (the clock, ids, errors, the logger) sit below every layer: what the core takes
    // from them imports no folder at all, and obeys the core's rules.
    const belowEveryLayer = new Map<string, string>();
    for (const [file, targets] of graph) {
      if (!CORE.includes(folderOf(file) ?? '')) continue;
      check(file, '');
      for (const target of targets)
        if ('file' in target && folderOf(target.file) === undefined) belowEveryLayer.set(target.file, file);
    }
    for (const [file, importer] of belowEveryLayer) {
      check(file, ` (imported by ${importer})`);
      for (const target of graph.get(file) ?? [])
        if ('file' in target && folderOf(target.file) !== undefined)
          violations.push(`${file} (imported by ${importer}) imports ${target.file}`);
    }
    expect(violations).toEqual([]);
  });

  it('each outside library is imported from its adapter only, and slack/ never imports the database', () => {
    const violations: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) {
        const name = describeTarget(target);
        for (const { library, home } of HOMES) {
          if ('library' in target && library.test(name) && !file.startsWith(home))
            violations.push(`${file} imports ${name} (its home is ${home})`);
        }
        if (folderOf(file) === 'slack' && 'file' in target && folderOf(name) === 'db')
          violations.push(`${file} imports ${name}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('only the entry points import the wiring in compose/', () => {
    const entries = ['main.ts', 'chat.ts', 'worker-thread.ts'];
    const violations: string[] = [];
    for (const [file, targets] of graph) {
      if (folderOf(file) === 'compose' || entries.includes(file)) continue;
      for (const target of targets)
        if ('file' in target && folderOf(target.file) === 'compose')
          violations.push(`${file} imports ${target.file}`);
    }
    expect(violations).toEqual([]);
  });

  it('the core folders depend on each other in one direction only', () => {
    const violations: string[] = [];
    for (const [file, targets] of graph) {
      const from = folderOf(file) ?? '';
      const may = LAYERS[from];
      if (!may) continue;
      for (const target of targets) {
        const to = 'file' in target ? folderOf(target.file) : undefined;
        if (to && to !== from && to in LAYERS && !may.includes(to))
          violations.push(`${file} imports ${describeTarget(target)}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it('no file imports itself through others', () => {
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (file: string, path: string[]): void => {
      state.set(file, 'open');
      for (const target of graph.get(file) ?? []) {
        if (!('file' in target)) continue;
        const stack = [...path, file];
        if (state.get(target.file) === 'open')
          cycles.push([...stack.slice(stack.indexOf(target.file)), target.file].join(' → '));
        else if (!state.has(target.file)) visit(target.file, stack);
      }
      state.set(file, 'done');
    };
    for (const file of graph.keys()) if (!state.has(file)) visit(file, []);
    expect(cycles).toEqual([]);
  });
});
