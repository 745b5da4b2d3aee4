import { getTableColumns, getTableName, is } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { describe, expect, it } from 'vitest';
import * as postgres from '../../src/db/postgres/schema.js';
import * as sqlite from '../../src/db/sqlite/schema.js';

/** Table name → its columns with whether each must be set. */
function shape(tables: readonly (SQLiteTable | PgTable)[]) {
  return Object.fromEntries(
    tables.map((table) => [
      getTableName(table),
      Object.fromEntries(
        Object.values(getTableColumns(table)).map((column) => [column.name, column.notNull]),
      ),
    ]),
  );
}

describe('the two schemas', () => {
  it('declare the same tables, columns and nullability, so one set of SQL serves both engines', () => {
    const lite = shape(Object.values(sqlite).filter((v) => is(v, SQLiteTable)));
    const pg = shape(Object.values(postgres).filter((v) => is(v, PgTable)));
    expect(Object.keys(lite).length).toBeGreaterThan(10);
    expect(pg).toEqual(lite);
  });
});
