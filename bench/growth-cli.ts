import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DatabaseConfig } from '../src/config.js';
import { REPO_ROOT, TSX_LOADER } from '../test/support/bot-process.js';

/** What one run of `npm run audit -- …` took: wall time, peak resident set, and what it printed. */
export interface CommandRun {
  seconds: number;
  peakMiB: number;
  out: string;
}

const PEAK_RSS = new URL('./peak-rss.mjs', import.meta.url).href;

/** The environment that names the database, as an operator would set it, and nothing else of the bench's. */
export function databaseEnv(where: DatabaseConfig): Record<string, string> {
  return where.kind === 'sqlite' ? { DATABASE_PATH: where.path } : { DATABASE_URL: where.url };
}

/** An empty working folder for the commands, made once. */
let folder: string | undefined;
function commandFolder(): string {
  folder ??= mkdtempSync(join(tmpdir(), 'bench-audit-'));
  return folder;
}

/**
 * Runs the real command line of `npm run audit -- ARGS` (src/cli/audit.ts under tsx, as the npm script runs
 * it, in one process) as a child process, and reads its peak RSS as the process itself counted it at exit.
 */
export function runAuditCommand(args: readonly string[], where: DatabaseConfig): Promise<CommandRun> {
  const started = performance.now();
  const child = spawn(
    process.execPath,
    ['--import', TSX_LOADER, '--import', PEAK_RSS, join(REPO_ROOT, 'src', 'cli', 'audit.ts'), ...args],
    {
      // Not the project folder: a `.env` there (the Quick Start's) must not reach the command.
      cwd: commandFolder(),
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...databaseEnv(where) },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (chunk: Buffer) => {
    out += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => {
      const seconds = (performance.now() - started) / 1000;
      const peak = /peak-rss-kib (\d+)/.exec(err);
      if (code !== 0 || !peak) {
        reject(new Error(`npm run audit -- ${args.join(' ')} exited ${code}: ${err}${out}`));
        return;
      }
      resolve({ seconds, peakMiB: Number(peak[1]) / 1024, out });
    });
  });
}
