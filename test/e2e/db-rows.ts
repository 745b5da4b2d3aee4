import Database from 'better-sqlite3';

/** Reads rows from the bot's database file, read-only, as a person inspecting it would. */
export function rows(path: string, sql: string, ...params: unknown[]): Record<string, unknown>[] {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    return db
      .prepare(sql)
      .all(...params)
      .filter((row): row is Record<string, unknown> => typeof row === 'object' && row !== null);
  } finally {
    db.close();
  }
}

/** Changes the database behind the bot's back: for simulating a state the current code cannot read. */
export function execute(path: string, sql: string, ...params: unknown[]): number {
  const db = new Database(path, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 5000');
    return db.prepare(sql).run(...params).changes;
  } finally {
    db.close();
  }
}
