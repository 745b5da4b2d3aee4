import { fileURLToPath } from 'node:url';
import { startBenchPostgres } from './postgres.js';
import { type BenchResult, formatTable, machine, writeResults } from './report.js';
import { FULL_SIZES, runSuite } from './suite.js';

/** `npm run bench`: every benchmark at full size, a table on stdout, the figures in bench/results.json. */
const started = performance.now();
const m = machine();
process.stdout.write(
  `Benchmarks on ${m.cpuModel} (${m.cores} cores, ${m.memoryGiB} GiB), Node ${m.node}, load average ${m.loadAverage}\n\n`,
);
// The PostgreSQL rows: an embedded server with PostgreSQL's durable defaults, or BENCH_DATABASE_URL.
const postgres = await startBenchPostgres();
process.stdout.write(
  `PostgreSQL server: ${postgres.description}\n(set BENCH_DATABASE_URL=postgres://USER:PASSWORD@HOST:5432/postgres to use a server of your own; its role must be allowed to create databases)\n\n`,
);
let results: BenchResult[];
try {
  results = await runSuite(FULL_SIZES, {
    postgresUrl: postgres.url,
    onResult: (result) => process.stdout.write(`${formatTable(result)}\n`),
  });
} finally {
  await postgres.stop();
}
const seconds = (performance.now() - started) / 1000;
const path = fileURLToPath(new URL('./results.json', import.meta.url));
writeResults(path, results, seconds, m.loadAverage);
const targets = results.flatMap((r) => r.targets);
const missed = targets.filter((t) => !t.met).length;
process.stdout.write(
  `${targets.length - missed} of ${targets.length} targets met; ${seconds.toFixed(0)} s; figures in ${path}\n`,
);
