import { randomBytes } from 'node:crypto';
import pg from 'pg';

/** Runs `work` on a client of its own connected to `url`, closed afterwards. */
export async function withAdmin<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

/** Resolves once the server at `url` answers a query (it may still be starting up). */
export async function waitUntilAccepting(url: string): Promise<void> {
  for (let attempt = 0; ; attempt += 1) {
    try {
      await withAdmin(url, (client) => client.query('select 1'));
      return;
    } catch (error) {
      if (attempt >= 50) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** A new, empty database on a server: its URL, and how to drop it once every connection to it is closed. */
export interface ServerDatabase {
  url: string;
  drop(): Promise<void>;
}

/** Creates a database named `<prefix>_<random>` on the server of `serverUrl` (which names its admin database). */
export async function createServerDatabase(serverUrl: string, prefix: string): Promise<ServerDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  await withAdmin(serverUrl, (admin) => admin.query(`create database ${name}`));
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.href,
    drop: async () => {
      await withAdmin(serverUrl, (admin) => admin.query(`drop database if exists ${name} with (force)`));
    },
  };
}
