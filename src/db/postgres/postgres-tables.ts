import { type BuildColumns, is, SQL } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  ExtraConfigColumn,
  index,
  integer,
  type PgBigInt53BuilderInitial,
  type PgBigSerial53BuilderInitial,
  type PgColumnBuilderBase,
  type PgIntegerBuilderInitial,
  type PgTableWithColumns,
  type PgTextBuilderInitial,
  pgTable,
  text,
  uniqueIndex,
} from 'drizzle-orm/pg-core';
import type { Writable } from 'drizzle-orm/utils';
import { AppError } from '../../errors.js';
import type { WithFlags } from '../schema/column-flags.js';
import type { Column, EnumValues } from '../schema/columns.js';
import type { Columns, Index, IndexPart, Table } from '../schema/table.js';

/** The drizzle PostgreSQL table of a table's description (src/db/schema/). */
export function pgTableOf<const T extends Table>(description: T): PgTableOf<T> {
  return pgTable<T['name'], PgColumns<T['columns']>>(
    description.name,
    pgColumns(description.columns),
    (columns) => description.indexes(columns).map(pgIndex),
  );
}

export type PgTableOf<T extends Table> = PgTableWithColumns<{
  name: T['name'];
  schema: undefined;
  columns: BuildColumns<T['name'], PgColumns<T['columns']>, 'pg'>;
  dialect: 'pg';
}>;

/** `bigInteger` is `bigint` (and `serialId` `bigserial`), read back as a JavaScript number. */
type Base<C extends Column> = C['kind'] extends 'text'
  ? PgTextBuilderInitial<
      C['name'],
      C['values'] extends EnumValues ? Writable<C['values']> : [string, ...string[]]
    >
  : C['kind'] extends 'integer'
    ? PgIntegerBuilderInitial<C['name']>
    : C['kind'] extends 'bigInteger'
      ? PgBigInt53BuilderInitial<C['name']>
      : PgBigSerial53BuilderInitial<C['name']>;

/** The drizzle column builder of a column's description, as precise as one written by hand. */
export type PgColumn<C extends Column> = WithFlags<Base<C>, C['flags']>;

export type PgColumns<C extends Columns> = { [K in keyof C]: PgColumn<C[K]> };

function pgColumns<C extends Columns>(columns: C): PgColumns<C> {
  const built = Object.fromEntries(Object.entries(columns).map(([key, column]) => [key, pgColumn(column)]));
  // Each column was built from its description as PgColumn<C[K]> states; TypeScript cannot follow the mapping.
  return built as PgColumns<C>;
}

function pgColumn(column: Column): PgColumnBuilderBase {
  const { name, flags, defaultValue } = column;
  if (column.kind === 'serialId') return bigserial(name, { mode: 'number' }).primaryKey();
  if (column.kind === 'text') {
    const built = text(name, column.values ? { enum: [...column.values] } : {});
    if (flags.primaryKey) return built.primaryKey();
    const required = flags.notNull ? built.notNull() : built;
    return typeof defaultValue === 'string' ? required.default(defaultValue) : required;
  }
  const built = column.kind === 'integer' ? integer(name) : bigint(name, { mode: 'number' });
  if (flags.primaryKey) return built.primaryKey();
  const required = flags.notNull ? built.notNull() : built;
  return typeof defaultValue === 'number' ? required.default(defaultValue) : required;
}

function pgIndex(description: Index) {
  const [first, ...rest] = description.columns;
  const built = (description.unique ? uniqueIndex : index)(description.name).on(
    pgIndexColumn(first),
    ...rest.map(pgIndexColumn),
  );
  return description.condition ? built.where(description.condition) : built;
}

function pgIndexColumn(column: IndexPart): ExtraConfigColumn | SQL {
  if (is(column, SQL)) return column;
  if (!is(column, ExtraConfigColumn))
    throw new AppError(
      'database.invalid_schema',
      `Index on ${column.name}: not a column of a PostgreSQL table`,
    );
  return column;
}
