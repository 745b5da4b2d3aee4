import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inject } from 'vitest';
import type { DatabaseConfig } from '../../src/config.js';
import { openPostgresDatabase } from '../../src/db/postgres/postgres-database.js';
import type { SqlDatabase } from '../../src/db/sql/sql-database.js';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';
import type { StoreContext } from '../../src/db/store-context.js';
import { createStores, type Stores } from '../../src/db/stores.js';
import { randomId } from '../../src/ids.js';
import { createServerDatabase } from './postgres-admin.js';
import { placeMigratedSqlite } from './sqlite-template.js';

export type DatabaseKind = 'sqlite' | 'postgres';

/**
 * Both engines: suites that must hold on each run once per kind (`describe.each(DATABASE_KINDS)`). The fast
 * tier (`npm run test:fast`, vitest.fast.config.ts) sets `TEST_DATABASE_KINDS=sqlite` and starts no
 * PostgreSQL server; `npm test` runs both.
 */
export const DATABASE_KINDS: readonly DatabaseKind[] =
  process.env.TEST_DATABASE_KINDS === 'sqlite' ? ['sqlite'] : ['sqlite', 'postgres'];

/** A new, empty database of one kind, as configuration and as the environment a bot process reads. */
export interface FreshDatabase {
  kind: DatabaseKind;
  config: DatabaseConfig;
  /** `DATABASE_PATH` or `DATABASE_URL`. */
  env: Record<string, string>;
  /** Deletes it (after every connection to it is closed). */
  drop(): Promise<void>;
}

/** A SQLite file in a new temporary folder, or a new database on the test PostgreSQL server. */
export async function freshDatabase(kind: DatabaseKind): Promise<FreshDatabase> {
  if (kind === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'bot-db-'));
    const path = join(dir, 'bot.db');
    return {
      kind,
      config: { kind: 'sqlite', path },
      env: { DATABASE_PATH: path },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    };
  }
  const { url, drop } = await createServerDatabase(inject('postgresUrl'), 'bot_test');
  return { kind, config: { kind: 'postgres', url, poolSize: 10 }, env: { DATABASE_URL: url }, drop };
}

/** Opens (and migrates) a fresh database as the bot does. */
export async function openFresh(fresh: FreshDatabase): Promise<SqlDatabase> {
  if (fresh.config.kind === 'postgres')
    return openPostgresDatabase(fresh.config.url, { poolSize: fresh.config.poolSize });
  await placeMigratedSqlite(fresh.config.path);
  return openSqliteDatabase(fresh.config.path);
}

export interface TestStores {
  /** The database, as db-rows and a bot process would be pointed at it. */
  fresh: FreshDatabase;
  db: SqlDatabase;
  stores: Stores;
  ctx: StoreContext;
  /** Another process on the same database: its own connection (pool), its own lease owner. */
  another(options?: Partial<Omit<StoreContext, 'db'>>): Promise<TestStores>;
  close(): Promise<void>;
}

/** Every store on a fresh database of `kind`, as one process (owner) sees them. */
export async function openTestStores(
  kind: DatabaseKind,
  options: Partial<Omit<StoreContext, 'db'>> = {},
): Promise<TestStores> {
  const fresh = await freshDatabase(kind);
  const opened: SqlDatabase[] = [];
  const open = async (given: Partial<Omit<StoreContext, 'db'>>): Promise<TestStores> => {
    const db = await openFresh(fresh);
    opened.push(db);
    const ctx: StoreContext = {
      db,
      clock: given.clock ?? { now: () => Date.now() },
      newId: given.newId ?? randomId,
      owner: given.owner ?? randomId('owner'),
      leaseMs: given.leaseMs ?? 30_000,
      ownerIsGone: given.ownerIsGone ?? (() => false),
    };
    return {
      fresh,
      db,
      ctx,
      stores: createStores(ctx),
      another: (more = {}) => open({ ...more }),
      close: async () => {
        for (const each of opened.splice(0)) await each.close();
        await fresh.drop();
      },
    };
  };
  return open(options);
}
