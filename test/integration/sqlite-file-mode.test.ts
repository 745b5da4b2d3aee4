import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openSqliteDatabase } from '../../src/db/sqlite/sqlite-database.js';

const modeOf = (path: string) => statSync(path).mode & 0o777;

/** Opening the file keeps it to its owner, and never gives back a write permission the operator took away. */
describe("the SQLite file's permissions when opened", () => {
  let dir: string;
  let path: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'bot-mode-'));
    path = join(dir, 'bot.db');
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("a new file is its owner's alone, and an existing one loses what the group and others had", async () => {
    await openSqliteDatabase(path).close();
    expect(modeOf(path)).toBe(0o600);
    chmodSync(path, 0o664);
    await openSqliteDatabase(path).close();
    expect(modeOf(path)).toBe(0o600);
  });

  it('a file made read-only stays read-only, whether or not this user may still open it', async () => {
    await openSqliteDatabase(path).close();
    chmodSync(path, 0o444);
    try {
      await openSqliteDatabase(path).close();
    } catch {
      // Refused to a user other than root: the file is read-only to them, as it should be.
    }
    expect(modeOf(path)).toBe(0o400);
  });
});
