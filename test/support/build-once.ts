import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { REPO_ROOT } from './bot-process.js';

/**
 * vitest's global setup: builds dist/ (what `npm start` runs) once before any test starts a bot process, so
 * processes started at the same time never build it side by side.
 */
export default function setup(): void {
  execFileSync(process.execPath, [join(REPO_ROOT, 'scripts', 'build.mjs'), '--if-stale'], {
    stdio: 'inherit',
  });
}
