import { fileURLToPath } from 'node:url';
import { startBenchPostgres } from './postgres.js';
import { type BenchResult, formatTable, machine, writeResults } from './report.js';
import { BENCHMARK_IDS, FULL_SIZES, runSuite } from './suite.js';

/**
 * `npm run bench [-- ID…]`: every benchmark (or only those named) at full size, a table on stdout, the figures
 * in bench/results.json.
 */
const only = process.argv.slice(2);
const unknown = only.filter((id) => !(BENCHMARK_IDS as readonly string[]).includes(id));
if (unknown.length > 0) {
  process.stderr.write(`Unknown benchmark ${unknown.join(', ')}: choose from ${BENCHMARK_IDS.join(', ')}.\n`);
  process.exit(2);
}
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
    only,
  });
} finally {
  await postgres.stop();
}
const seconds = (performance.now() - started) / 1000;
// A run of some benchmarks only leaves the full run's figures as they are.
const path = fileURLToPath(
  new URL(only.length > 0 ? './results-partial.json' : './results.json', import.meta.url),
);
writeResults(path, results, seconds, m.loadAverage);
const targets = results.flatMap((r) => r.targets);
const missed = targets.filter((t) => !t.met).length;
process.stdout.write(
  `${targets.length - missed} of ${targets.length} targets met; ${seconds.toFixed(0)} s; figures in ${path}\n`,
);
