import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import { PgDialect } from 'drizzle-orm/pg-core';
import pg from 'pg';
import { AppError, describeError } from '../../errors.js';
import { withAuditLast } from '../audit-writer.js';
import { driveAsync, type Program, type Step } from '../sql/program.js';
import { type DatabaseProbe, POSTGRES_DIALECT, type SqlDatabase } from '../sql/sql-database.js';

/** The generated migrations, found from this file so the working directory does not matter. */
const MIGRATIONS = resolve(dirname(fileURLToPath(import.meta.url)), '../../../drizzle/postgres');

/** Held while one process migrates, so processes starting together apply each migration once. */
const MIGRATION_LOCK = 7_120_530;

/** Deadlock, serialization failure: the transaction lost a race and may simply run again. */
const RETRYABLE = new Set(['40P01', '40001']);
const MAX_ATTEMPTS = 5;

const INT8_OID = 20;

/** How long a health probe waits for the server. */
const PROBE_TIMEOUT_MS = 2_000;

export interface PostgresOptions {
  /** Connections in the pool. */
  poolSize: number;
  /** Reads only: no migrations; every transaction is read-only. */
  readOnly?: boolean;
  /** Where idle-connection errors go (a restarted server); they must never end the process. */
  onError?: (error: Error) => void;
}

/**
 * Connects a pool to `url`, applies every migration (serialised across processes) and returns the engine.
 * Times are epoch milliseconds in `bigint` columns, parsed back to numbers.
 */
export async function openPostgresDatabase(url: string, options: PostgresOptions): Promise<SqlDatabase> {
  const pool = new pg.Pool({
    connectionString: url,
    max: options.poolSize,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
        oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
    },
    ...(options.readOnly ? { options: '-c default_transaction_read_only=on' } : {}),
  });
  pool.on('error', (error) => options.onError?.(error));
  try {
    if (!options.readOnly) await migrateOnce(pool);
  } catch (error) {
    await pool.end();
    throw error;
  }
  return createEngine(pool);
}

async function migrateOnce(pool: pg.Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      // On the locked connection itself: a pool of one has no second connection to give.
      await migrate(drizzle(client), { migrationsFolder: MIGRATIONS });
    } finally {
      await client.query('select pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

function createEngine(pool: pg.Pool): SqlDatabase {
  const dialect = new PgDialect();
  let open = true;
  const taker =
    (client: pg.PoolClient) =>
    async (step: Step): Promise<unknown> => {
      if (step.op === 'audit')
        throw new AppError(
          'database.audit_outside_write',
          'Audit events can only be written in a write transaction',
        );
      const { sql: text, params } = dialect.sqlToQuery(step.query);
      const result = await client.query(text, params);
      return step.op === 'rows' ? result.rows : (result.rowCount ?? 0);
    };
  const withClient = async <T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect();
    let broken = false;
    try {
      return await work(client);
    } catch (error) {
      // A connection that failed mid-transaction may be unusable: it leaves the pool.
      broken = !(error instanceof pg.DatabaseError);
      throw error;
    } finally {
      client.release(broken);
    }
  };
  return {
    dialect: POSTGRES_DIALECT,
    read: (program) => withClient((client) => driveAsync(program(), taker(client))),
    async write<T>(program: () => Program<T>): Promise<T> {
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await withClient(async (client) => {
            await client.query('begin');
            try {
              const result = await driveAsync(withAuditLast(POSTGRES_DIALECT, program()), taker(client));
              await client.query('commit');
              return result;
            } catch (error) {
              await client.query('rollback').catch(() => undefined);
              throw error;
            }
          });
        } catch (error) {
          if (attempt >= MAX_ATTEMPTS || !isRetryable(error)) throw error;
        }
      }
    },
    isOpen: () => open,
    async probe(): Promise<DatabaseProbe> {
      if (!open) return { ok: false, problem: 'closed' };
      try {
        const state = await withTimeout(
          withClient((client) =>
            client.query<{ recovery: boolean; read_only: string }>(
              "select pg_is_in_recovery() as recovery, current_setting('transaction_read_only') as read_only",
            ),
          ),
          PROBE_TIMEOUT_MS,
        );
        const row = state.rows[0];
        if (row?.recovery) return { ok: false, problem: 'the server is a standby (in recovery): read-only' };
        if (row?.read_only === 'on') return { ok: false, problem: 'the database is read-only' };
        return { ok: true };
      } catch (error) {
        return { ok: false, problem: describeError(error) };
      }
    },
    async close() {
      if (!open) return;
      open = false;
      await pool.end();
    },
  };
}

/** Rejects when `work` has not settled within `ms` (a server that accepts connections and never answers). */
function withTimeout<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, late]).finally(() => clearTimeout(timer));
}

function isRetryable(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.code !== undefined && RETRYABLE.has(error.code);
}
