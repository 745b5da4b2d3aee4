import { fileURLToPath } from 'node:url';
import { formatTable, machine, writeResults } from './report.js';
import { FULL_SIZES, runSuite } from './suite.js';

/** `npm run bench`: every benchmark at full size, a table on stdout, the figures in bench/results.json. */
const started = performance.now();
const m = machine();
process.stdout.write(
  `Benchmarks on ${m.cpuModel} (${m.cores} cores, ${m.memoryGiB} GiB), Node ${m.node}, load average ${m.loadAverage}\n\n`,
);
const results = await runSuite(FULL_SIZES, (result) => process.stdout.write(`${formatTable(result)}\n`));
const seconds = (performance.now() - started) / 1000;
const path = fileURLToPath(new URL('./results.json', import.meta.url));
writeResults(path, results, seconds, m.loadAverage);
const targets = results.flatMap((r) => r.targets);
const missed = targets.filter((t) => !t.met).length;
process.stdout.write(
  `${targets.length - missed} of ${targets.length} targets met; ${seconds.toFixed(0)} s; figures in ${path}\n`,
);
