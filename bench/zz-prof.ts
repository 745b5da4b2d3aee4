import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { clickRequest, pauseThreads, scriptApprovalFlow, startFakes, waitForAnswers } from './rig.js';
import { quantile } from './report.js';
const fakes = await startFakes();
scriptApprovalFlow(fakes.model);
const port = 39123;
const child = spawn(process.execPath, ['--cpu-prof', '--cpu-prof-dir=/tmp/cp', '--max-semi-space-size=4', 'scripts/start.mjs'], { env: { ...process.env, ...fakes.env, PORT: String(port), WORKERS: process.env.W ?? '1' }, stdio: 'inherit' });
for (;;) { try { if ((await fetch(`http://127.0.0.1:${port}/healthz`)).ok) break; } catch {} await new Promise((r) => setTimeout(r, 100)); }
const url = `http://127.0.0.1:${port}/slack/events`;
const cards = await pauseThreads(fakes, [url], 700);
let used = 0; let answered = 0; const all: number[] = [];
for (let r = 0; r < 7; r++) {
  const t = await fakes.load.fire(cards.slice(used, used + 100).map((c) => clickRequest(url, c))); used += 100; answered += 100;
  await waitForAnswers(fakes, answered); if (r > 0) all.push(...t);
}
console.log('p50', quantile(all, 0.5), 'p99', quantile(all, 0.99));
child.kill('SIGTERM'); await once(child, 'exit'); await fakes.close();
