import { getTableColumns, getTableName, is, sql } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import * as schema from './postgres/schema.js';
import { approvalDays, approvalWaitDays, deadlineDays, runUsageDays } from './schema/daily-totals.js';
import { readNumber, readString } from './sql/columns.js';
import { count, type Row, row, rows } from './sql/program.js';
import type { SqlDatabase } from './sql/sql-database.js';

/** Rows read and written at a time. */
const BATCH = 500;

export interface CopyReport {
  /** Rows copied, by table. */
  tables: { table: string; rows: number }[];
  /** The newest audit event's hash, the same on both databases after the copy (null for an empty log). */
  auditHead: string | null;
}

export type CopyResult = { ok: true; report: CopyReport } | { ok: false; problem: string };

interface Table {
  name: string;
  columns: string[];
  /** Its `id` is numbered by a sequence, which must go on after the copied ids. */
  serialId: boolean;
}

/**
 * Every table of the PostgreSQL schema (the same tables as SQLite's), with its column names, but the daily
 * totals: the target's triggers add them up again as the rows they count are copied.
 */
function tables(): Table[] {
  const derived = [approvalDays, approvalWaitDays, deadlineDays, runUsageDays].map((t) => t.name as string);
  const found: PgTable[] = [];
  for (const value of Object.values(schema))
    if (is(value, PgTable) && !derived.includes(getTableName(value))) found.push(value);
  return found.map((table) => {
    const columns = Object.values(getTableColumns(table));
    return {
      name: getTableName(table),
      columns: columns.map((column) => column.name),
      serialId: columns.some((column) => column.name === 'id' && column.getSQLType() === 'bigserial'),
    };
  });
}

/**
 * Copies every row of every table from the SQLite database `from` into `to`, an empty PostgreSQL database
 * (migrated), unchanged: ids, times, the audit chain byte for byte. Refuses a target that holds any
 * row. Afterwards the id sequences continue after the copied ids, and row counts and the chain head are
 * compared on both sides.
 */
export async function copyDatabase(from: SqlDatabase, to: SqlDatabase): Promise<CopyResult> {
  const all = tables();
  for (const { name } of all) {
    if ((await countRows(to, name)) > 0)
      return {
        ok: false,
        problem: `the target already holds data (table ${name}); copy into an empty database`,
      };
  }
  const copied: CopyReport['tables'] = [];
  for (const table of all) {
    let total = 0;
    for (let offset = 0; ; offset += BATCH) {
      const batch = await from.read(() =>
        rows(sql`select * from ${sql.raw(table.name)} order by rowid limit ${BATCH} offset ${offset}`),
      );
      if (batch.length === 0) break;
      await to.write(() => insertRows(table, batch));
      total += batch.length;
    }
    copied.push({ table: table.name, rows: total });
  }
  await to.write(() => continueSequences(all));
  for (const { table, rows: expected } of copied) {
    const found = await countRows(to, table);
    if (found !== expected)
      return { ok: false, problem: `table ${table} holds ${found} rows after the copy, not ${expected}` };
  }
  const [source, target] = await Promise.all([auditHead(from), auditHead(to)]);
  if (source !== target) return { ok: false, problem: 'the audit chain head differs after the copy' };
  return { ok: true, report: { tables: copied, auditHead: source } };
}

function* insertRows(table: Table, batch: readonly Row[]) {
  const values = batch.map(
    (r) =>
      sql`(${sql.join(
        table.columns.map((c) => sql`${r[c] ?? null}`),
        sql`, `,
      )})`,
  );
  yield* count(sql`insert into ${sql.raw(table.name)} (${sql.raw(table.columns.join(', '))})
    values ${sql.join(values, sql`, `)}`);
}

/** Serial ids go on after the largest copied id. */
function* continueSequences(all: readonly Table[]) {
  for (const { name } of all.filter((table) => table.serialId)) {
    yield* row(sql`select setval(pg_get_serial_sequence(${name}, 'id'), coalesce(max(id), 1), max(id) is not null)
      from ${sql.raw(name)}`);
  }
}

async function countRows(db: SqlDatabase, table: string): Promise<number> {
  const found = await db.read(() => row(sql`select count(*) as n from ${sql.raw(table)}`));
  return found ? readNumber(found, 'n') : 0;
}

async function auditHead(db: SqlDatabase): Promise<string | null> {
  const head = await db.read(() => row(sql`select hash from audit_events order by seq desc limit 1`));
  return head ? readString(head, 'hash') : null;
}
