import { type BuildColumns, is, SQL } from 'drizzle-orm';
import {
  index,
  integer,
  SQLiteColumn,
  type SQLiteColumnBuilderBase,
  type SQLiteIntegerBuilderInitial,
  type SQLiteTableWithColumns,
  type SQLiteTextBuilderInitial,
  sqliteTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/sqlite-core';
import type { Writable } from 'drizzle-orm/utils';
import { AppError } from '../../errors.js';
import type { WithFlags } from '../schema/column-flags.js';
import type { Column, EnumValues } from '../schema/columns.js';
import type { Columns, Index, IndexPart, Table } from '../schema/table.js';

/** The drizzle SQLite table of a table's description (src/db/schema/). */
export function sqliteTableOf<const T extends Table>(description: T): SqliteTableOf<T> {
  return sqliteTable<T['name'], SqliteColumns<T['columns']>>(
    description.name,
    sqliteColumns(description.columns),
    (columns) => description.indexes(columns).map(sqliteIndex),
  );
}

export type SqliteTableOf<T extends Table> = SQLiteTableWithColumns<{
  name: T['name'];
  schema: undefined;
  columns: BuildColumns<T['name'], SqliteColumns<T['columns']>, 'sqlite'>;
  dialect: 'sqlite';
}>;

/** SQLite's integers are all 64 bits: every number column is an `integer`. */
type Base<C extends Column> = C['kind'] extends 'text'
  ? SQLiteTextBuilderInitial<
      C['name'],
      C['values'] extends EnumValues ? Writable<C['values']> : [string, ...string[]],
      number | undefined
    >
  : SQLiteIntegerBuilderInitial<C['name']>;

/** The drizzle column builder of a column's description, as precise as one written by hand. */
export type SqliteColumn<C extends Column> = WithFlags<Base<C>, C['flags']>;

export type SqliteColumns<C extends Columns> = { [K in keyof C]: SqliteColumn<C[K]> };

function sqliteColumns<C extends Columns>(columns: C): SqliteColumns<C> {
  const built = Object.fromEntries(
    Object.entries(columns).map(([key, column]) => [key, sqliteColumn(column)]),
  );
  // Each column was built from its description as SqliteColumn<C[K]> states; TypeScript cannot follow the mapping.
  return built as SqliteColumns<C>;
}

function sqliteColumn(column: Column): SQLiteColumnBuilderBase {
  const { name, flags, defaultValue } = column;
  if (column.kind === 'serialId') return integer(name).primaryKey({ autoIncrement: true });
  if (column.kind === 'text') {
    const built = text(name, column.values ? { enum: [...column.values] } : {});
    if (flags.primaryKey) return built.primaryKey();
    const required = flags.notNull ? built.notNull() : built;
    return typeof defaultValue === 'string' ? required.default(defaultValue) : required;
  }
  const built = integer(name);
  if (flags.primaryKey) return built.primaryKey();
  const required = flags.notNull ? built.notNull() : built;
  return typeof defaultValue === 'number' ? required.default(defaultValue) : required;
}

function sqliteIndex(description: Index) {
  const [first, ...rest] = description.columns;
  const built = (description.unique ? uniqueIndex : index)(description.name).on(
    sqliteIndexColumn(first),
    ...rest.map(sqliteIndexColumn),
  );
  return description.condition ? built.where(description.condition) : built;
}

function sqliteIndexColumn(column: IndexPart): SQLiteColumn | SQL {
  if (is(column, SQL)) return column;
  if (!is(column, SQLiteColumn))
    throw new AppError('database.invalid_schema', `Index on ${column.name}: not a column of a SQLite table`);
  return column;
}
