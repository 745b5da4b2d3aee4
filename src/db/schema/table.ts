import type { Column as DrizzleColumn, SQL } from 'drizzle-orm';
import type { Column } from './columns.js';

/** The columns of one table, by the name the code uses (the SQL name is the column's own). */
export type Columns = Record<string, Column>;

/** What an index is on: a column of the engine's own table, or an expression written the same on both engines. */
export type IndexPart = DrizzleColumn | SQL;

/**
 * An index of a table, on columns of the engine's own table (or expressions); `where` makes it partial (its SQL
 * is the same on both engines).
 */
export class Index {
  constructor(
    readonly name: string,
    readonly unique: boolean,
    readonly columns: readonly [IndexPart, ...IndexPart[]],
    readonly condition?: SQL,
  ) {}

  where(condition: SQL): Index {
    return new Index(this.name, this.unique, this.columns, condition);
  }
}

/** A table's indexes, from its columns as the engine built them. */
export type Indexes<TColumns extends Columns> = (columns: Record<keyof TColumns, DrizzleColumn>) => Index[];

/** One table, described once for both engines. */
export interface Table<TName extends string = string, TColumns extends Columns = Columns> {
  name: TName;
  columns: TColumns;
  indexes: Indexes<TColumns>;
}

export function table<const TName extends string, const TColumns extends Columns>(
  name: TName,
  columns: TColumns,
  indexes: Indexes<TColumns> = () => [],
): Table<TName, TColumns> {
  return { name, columns, indexes };
}

export function index(name: string) {
  return { on: (...columns: [IndexPart, ...IndexPart[]]) => new Index(name, false, columns) };
}

export function uniqueIndex(name: string) {
  return { on: (...columns: [IndexPart, ...IndexPart[]]) => new Index(name, true, columns) };
}
