import type { ColumnBuilderBase, HasDefault, NotNull } from 'drizzle-orm';
import type { Column } from './columns.js';

/**
 * The drizzle builder `B` (an engine's column of the right kind) after the calls a column's flags stand for:
 * `.primaryKey()`, or `.notNull()` and `.default(…)`. Each engine's table types are built with it.
 */
export type WithFlags<B extends ColumnBuilderBase, F extends Column['flags']> = F['primaryKey'] extends true
  ? PrimaryKey<B>
  : F['hasDefault'] extends true
    ? HasDefault<F['notNull'] extends true ? NotNull<B> : B>
    : F['notNull'] extends true
      ? NotNull<B>
      : B;

/** What the engine's own `.primaryKey()` makes of `B` (SQLite's integer key also gets a default: the rowid). */
type PrimaryKey<B> = B extends { primaryKey(): infer K } ? K : never;
