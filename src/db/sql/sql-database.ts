import { type SQL, sql } from 'drizzle-orm';
import type { Program } from './program.js';

/**
 * What differs between the engines in the SQL the stores write. Everything else (parameters, `returning`,
 * `on conflict do nothing`, partial indexes) is the same text for both.
 */
export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  /**
   * Appended to a select whose rows the transaction goes on to change. PostgreSQL locks them until the
   * transaction ends; SQLite needs nothing, as a write transaction there holds the whole database.
   */
  readonly forUpdate: SQL;
  /** Like `forUpdate`, passing over rows another transaction holds (each due job is taken by one process). */
  readonly forUpdateSkipLocked: SQL;
  /** A statement that serialises appends to the audit chain across processes, or null where writes are serial. */
  readonly lockAuditHead: SQL | null;
  /** The text of `key` in the JSON object stored as text in `column`. */
  jsonText(column: SQL, key: string): SQL;
  /** Whether `text` holds `part`, ignoring the case of letters A to Z (and of every letter on PostgreSQL). */
  containsText(text: SQL, part: string): SQL;
}

export const SQLITE_DIALECT: Dialect = {
  name: 'sqlite',
  forUpdate: sql.empty(),
  forUpdateSkipLocked: sql.empty(),
  lockAuditHead: null,
  jsonText: (column, key) => sql`json_extract(${column}, ${`$.${key}`})`,
  containsText: (text, part) => sql`instr(lower(${text}), lower(${part})) > 0`,
};

/**
 * Any number, the same in every process of the bot: the advisory lock that guards the audit chain's head. The
 * daily totals' trigger takes it too (drizzle/postgres/0020_daily-totals.sql): change both or neither.
 */
const AUDIT_HEAD_LOCK = 7_120_531;

export const POSTGRES_DIALECT: Dialect = {
  name: 'postgres',
  forUpdate: sql.raw('for update'),
  forUpdateSkipLocked: sql.raw('for update skip locked'),
  lockAuditHead: sql`select pg_advisory_xact_lock(${AUDIT_HEAD_LOCK})`,
  // A payload that is not JSON (only a tampered row) reads as no value rather than failing the query.
  jsonText: (column, key) => sql`(case when ${column} ~ '^\\s*\\{' then (${column})::jsonb ->> ${key} end)`,
  containsText: (text, part) => sql`strpos(lower(${text}), lower(${part}::text)) > 0`,
};

/** Whether the database can take writes now; `problem` says why not, for `/healthz` and the log. */
export type DatabaseProbe = { ok: true } | { ok: false; problem: string };

/**
 * One database, whichever engine: the stores hand it programs (see program.ts) and it runs them. SQLite runs
 * them synchronously (better-sqlite3), PostgreSQL on a pooled connection.
 */
export interface SqlDatabase {
  readonly dialect: Dialect;
  /** Runs a program that only reads, outside a transaction. */
  read<T>(program: () => Program<T>): Promise<T>;
  /**
   * Runs a program as one transaction; its audit events are chained at the end, inside it. SQLite takes the
   * write lock at the start (`BEGIN IMMEDIATE`); PostgreSQL retries the whole program after a deadlock or a
   * serialization failure, so a program must not act outside the database.
   */
  write<T>(program: () => Program<T>): Promise<T>;
  /** True from the moment the database is open and migrated until `close`. */
  isOpen(): boolean;
  /**
   * A cheap check that a write would succeed now (no row is written): the server answers and is not read-only
   * (PostgreSQL), or the file is still there, writable, with room left and its write lock obtainable (SQLite).
   */
  probe(): Promise<DatabaseProbe>;
  close(): Promise<void>;
}
