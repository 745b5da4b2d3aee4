import Database from 'better-sqlite3';
import pg from 'pg';
import type { DatabaseConfig } from '../../src/config.js';

/** A bot's database: a SQLite file path, or either kind as configured. */
export type DatabaseTarget = string | DatabaseConfig;

const asConfig = (target: DatabaseTarget): DatabaseConfig =>
  typeof target === 'string' ? { kind: 'sqlite', path: target } : target;

/** `?` placeholders as PostgreSQL writes them: `$1`, `$2`, … */
const numbered = (sql: string) => {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
};

/**
 * Reads rows from the bot's database, as a person inspecting it would (read-only for SQLite). The SQL uses `?`
 * placeholders and must be valid on both engines; PostgreSQL's bigint columns come back as numbers.
 */
export async function rows(
  target: DatabaseTarget,
  sql: string,
  ...params: unknown[]
): Promise<Record<string, unknown>[]> {
  const config = asConfig(target);
  if (config.kind === 'sqlite') {
    const db = new Database(config.path, { readonly: true, fileMustExist: true });
    try {
      return db
        .prepare(sql)
        .all(...params)
        .filter((row): row is Record<string, unknown> => typeof row === 'object' && row !== null);
    } finally {
      db.close();
    }
  }
  return withClient(config.url, async (client) => (await client.query(numbered(sql), params)).rows);
}

/** Changes the database behind the bot's back: for simulating a state the current code cannot read. */
export async function execute(target: DatabaseTarget, sql: string, ...params: unknown[]): Promise<number> {
  const config = asConfig(target);
  if (config.kind === 'sqlite') {
    const db = new Database(config.path, { fileMustExist: true });
    try {
      db.pragma('busy_timeout = 5000');
      return db.prepare(sql).run(...params).changes;
    } finally {
      db.close();
    }
  }
  return withClient(config.url, async (client) => (await client.query(numbered(sql), params)).rowCount ?? 0);
}

async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({
    connectionString: url,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === 20 ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
  });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
