import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT, TSX_LOADER } from '../support/bot-process.js';

/** Files that do their work when loaded (the commands and the threads): importing them would run them. */
const ENTRY_POINTS = new Set([
  'src/main.ts',
  'src/worker-thread.ts',
  'src/chat.ts',
  'src/cli/audit.ts',
  'src/cli/console.ts',
  'src/cli/db.ts',
  'src/cli/policy.ts',
]);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/**
 * The commands (`npm run audit`, `db`, `chat`, `bench`…) run the sources under tsx, where Node's own ESM loader
 * reads the CommonJS packages: a name it cannot see as a named export (`import { retryPolicies } from
 * '@slack/web-api'`) fails there, while the bundled bot and the tests, which go through other loaders, work.
 */
describe('the sources as the commands load them', () => {
  it('every module of src imports under Node with tsx', () => {
    const modules = sourceFiles(join(REPO_ROOT, 'src'))
      .filter((path) => !ENTRY_POINTS.has(relative(REPO_ROOT, path)))
      .map((path) => pathToFileURL(path).href);
    const script = `const failed = [];
      for (const url of ${JSON.stringify(modules)}) {
        try { await import(url); } catch (error) { failed.push(url + ': ' + error.message); }
      }
      console.log(JSON.stringify(failed));
      process.exit(0);`;
    const run = spawnSync(process.execPath, ['--import', TSX_LOADER, '--input-type=module', '-e', script], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(JSON.parse(lines.at(-1) ?? '')).toEqual([]);
    expect(modules.length).toBeGreaterThan(100);
  }, 90_000);
});
