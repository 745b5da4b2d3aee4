import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { SQL } from 'drizzle-orm';
import { type MigrationMeta, readMigrationFiles } from 'drizzle-orm/migrator';
import { SQLiteSyncDialect } from 'drizzle-orm/sqlite-core';
import { AppError } from '../../errors.js';
import { withAuditLast } from '../audit-writer.js';
import { driveSync, type Program, type Step } from '../sql/program.js';
import { type DatabaseProbe, SQLITE_DIALECT, type SqlDatabase } from '../sql/sql-database.js';
import { createSqliteProbe } from './sqlite-probe.js';

/** The generated migrations, found from this file so the working directory does not matter. */
const MIGRATIONS = resolve(dirname(fileURLToPath(import.meta.url)), '../../../drizzle/sqlite');

/** Statements kept prepared; past this many (only lists of varying length make new ones) the cache starts over. */
const STATEMENT_CACHE_SIZE = 500;

/** Each connection's page cache, in KiB. */
const CACHE_KIB = 2_000;

/**
 * Opens (creating when needed, mode 0600; an existing file loses its group's and others' bits) the SQLite file,
 * sets WAL and a busy timeout, and applies every migration. `:memory:` is accepted for tests. Several processes may open one file: SQLite serialises their
 * write transactions, and each waits up to the busy timeout for the others.
 */
export function openSqliteDatabase(path: string): SqlDatabase {
  if (path !== ':memory:') {
    mkdirSync(dirname(resolve(path)), { recursive: true });
    if (!existsSync(path)) closeSync(openSync(path, 'a', 0o600));
    // Nobody else may read it (tokens, conversations); a file the operator made read-only stays read-only.
    chmodSync(path, statSync(path).mode & 0o700);
  }
  const sqlite = new Database(path);
  // The busy timeout first: switching to WAL needs a lock that another process may be holding.
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('journal_mode = WAL');
  // SQLite's own default page cache (2 MiB) per connection rather than the 16 MiB this build defaults to: each
  // thread has its connection, the operating system caches the file as well, and the working set of a run is a
  // few rows.
  sqlite.pragma(`cache_size = ${-CACHE_KIB}`);
  migrate(sqlite);
  guardAuditEvents(sqlite);
  return createEngine(sqlite, { writable: true, probe: createSqliteProbe(sqlite, path) });
}

/**
 * Opens an existing database for reading only: no migrations, no triggers, no file created, nothing written.
 * For the audit command line, which may be pointed at a copy kept as evidence. Throws when the file is absent.
 */
export function openSqliteReadOnly(path: string): SqlDatabase {
  const sqlite = new Database(path, { readonly: true, fileMustExist: true });
  sqlite.pragma('busy_timeout = 5000');
  return createEngine(sqlite, {
    writable: false,
    probe: () => ({ ok: false, problem: 'opened read-only' }),
  });
}

/** The generated migrations, read (and hashed) at the first opening in a process: they ship with its code. */
let migrationsRead: MigrationMeta[] | undefined;

function generatedMigrations(): MigrationMeta[] {
  migrationsRead ??= readMigrationFiles({ migrationsFolder: MIGRATIONS });
  return migrationsRead;
}

/**
 * Applies the migrations drizzle-kit generated that this file has not seen, recorded as drizzle's own migrator
 * records them (`__drizzle_migrations`: each migration's hash and folder time), so either may apply them. All in
 * one transaction that takes the write lock first: processes starting together on one new file apply each
 * migration once (the later ones find them applied).
 */
function migrate(sqlite: Database.Database): void {
  const migrations = generatedMigrations();
  sqlite.exec(
    'CREATE TABLE IF NOT EXISTS "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric)',
  );
  const last = sqlite.prepare(
    'SELECT created_at FROM "__drizzle_migrations" ORDER BY created_at DESC LIMIT 1',
  );
  const record = sqlite.prepare('INSERT INTO "__drizzle_migrations" ("hash", "created_at") VALUES (?, ?)');
  const apply = sqlite.transaction(() => {
    const row: unknown = last.get();
    const applied = row && typeof row === 'object' && 'created_at' in row ? Number(row.created_at) : 0;
    for (const migration of migrations) {
      if (migration.folderMillis <= applied) continue;
      for (const statement of migration.sql) sqlite.exec(statement);
      record.run(migration.hash, migration.folderMillis);
    }
  });
  apply.immediate();
}

/**
 * Makes `audit_events` append-only inside SQLite itself: any DELETE aborts, and any UPDATE except the one retention
 * makes (the payload of a version 2 event, whose hash covers its digest), whoever issues it. Someone
 * with the file can still drop the triggers; the hash chain is what proves such an edit (`npm run audit --
 * verify`). Written as SQLite keeps them in `sqlite_master` (the text of the CREATE statement, no final `;`), so an
 * opening that finds them as they are writes nothing.
 */
const AUDIT_TRIGGERS = {
  audit_events_no_delete: `CREATE TRIGGER audit_events_no_delete BEFORE DELETE ON audit_events
       BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END`,
  audit_events_no_update: `CREATE TRIGGER audit_events_no_update BEFORE UPDATE ON audit_events
       WHEN NOT (OLD.chain_version = 2 AND NEW.chain_version = 2 AND NEW.seq = OLD.seq AND NEW.at = OLD.at
         AND NEW.actor = OLD.actor AND NEW.kind = OLD.kind AND NEW.team_id IS OLD.team_id
         AND NEW.conversation_id IS OLD.conversation_id AND NEW.run_id IS OLD.run_id
         AND NEW.approval_id IS OLD.approval_id AND NEW.prev_hash = OLD.prev_hash AND NEW.hash = OLD.hash
         AND NEW.payload_digest IS OLD.payload_digest)
       BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END`,
} as const;

/**
 * Runs after the migrations at every start. The delete guard is created when missing; the update guard is
 * replaced when it differs from {@link AUDIT_TRIGGERS} (databases from before retention refused every UPDATE).
 */
function guardAuditEvents(sqlite: Database.Database): void {
  const stored = sqlite.prepare("SELECT sql FROM sqlite_master WHERE type = 'trigger' AND name = ?").pluck();
  const missing = () => stored.get('audit_events_no_delete') === undefined;
  const outdated = () => stored.get('audit_events_no_update') !== AUDIT_TRIGGERS.audit_events_no_update;
  if (!missing() && !outdated()) return;
  const guard = sqlite.transaction(() => {
    if (missing()) sqlite.exec(AUDIT_TRIGGERS.audit_events_no_delete);
    if (outdated()) {
      sqlite.exec('DROP TRIGGER IF EXISTS audit_events_no_update');
      sqlite.exec(AUDIT_TRIGGERS.audit_events_no_update);
    }
  });
  guard.immediate();
}

function createEngine(
  sqlite: Database.Database,
  { writable, probe }: { writable: boolean; probe: () => DatabaseProbe },
): SqlDatabase {
  const dialect = new SQLiteSyncDialect();
  const statements = new Map<string, Database.Statement>();
  const prepared = (query: SQL) => {
    const { sql: text, params } = dialect.sqlToQuery(query);
    let statement = statements.get(text);
    if (!statement) {
      if (statements.size >= STATEMENT_CACHE_SIZE) statements.clear();
      statement = sqlite.prepare(text);
      statements.set(text, statement);
    }
    return { statement, values: params.map(toSqliteValue) };
  };
  const take = (step: Step): unknown => {
    if (step.op === 'audit')
      throw new AppError(
        'database.audit_outside_write',
        'Audit events can only be written in a write transaction',
      );
    const { statement, values } = prepared(step.query);
    return step.op === 'rows' ? statement.all(...values) : statement.run(...values).changes;
  };
  const settle = <T>(work: () => T): Promise<T> => {
    try {
      return Promise.resolve(work());
    } catch (error) {
      return Promise.reject(error);
    }
  };
  return {
    dialect: SQLITE_DIALECT,
    read: (program) => settle(() => driveSync(program(), take)),
    write<T>(program: () => Program<T>) {
      if (!writable) return Promise.reject(new Error('This database was opened read-only'));
      // IMMEDIATE: the write lock is taken at BEGIN, so a read-then-write never meets a writer in between.
      const transaction = sqlite.transaction(() => driveSync(withAuditLast(SQLITE_DIALECT, program()), take));
      return settle(() => transaction.immediate());
    },
    isOpen: () => sqlite.open,
    probe: () => settle(probe),
    async close() {
      if (sqlite.open) sqlite.close();
    },
  };
}

/** better-sqlite3 binds numbers, strings, bigints, buffers and null; booleans become 0/1. */
function toSqliteValue(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  return value;
}
