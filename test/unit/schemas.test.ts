import { getTableColumns, getTableName, is } from 'drizzle-orm';
import { PgTable } from 'drizzle-orm/pg-core';
import { SQLiteTable } from 'drizzle-orm/sqlite-core';
import { describe, expect, expectTypeOf, it } from 'vitest';
import * as postgres from '../../src/db/postgres/schema.js';
import * as description from '../../src/db/schema/tables.js';
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

  it('export every described table under its own name, which is what drizzle-kit reads', () => {
    const described = Object.entries(description).map(([key, table]) => [key, table.name]);
    const exported = (schema: object) =>
      Object.entries(schema).map(([key, table]) => [key, getTableName(table)]);
    expect(exported(sqlite).sort()).toEqual(described.sort());
    expect(exported(postgres).sort()).toEqual(described.sort());
  });

  it('give each table the same row type on both engines', () => {
    expectTypeOf<typeof sqlite.runs.$inferSelect>().toEqualTypeOf<typeof postgres.runs.$inferSelect>();
    expectTypeOf<typeof sqlite.approvals.$inferInsert>().toEqualTypeOf<
      typeof postgres.approvals.$inferInsert
    >();
    expectTypeOf<typeof sqlite.auditEvents.$inferSelect>().toEqualTypeOf<
      typeof postgres.auditEvents.$inferSelect
    >();
    expectTypeOf<(typeof sqlite.conversations.$inferSelect)['surface']>().toEqualTypeOf<
      'slack' | 'terminal'
    >();
  });
});
