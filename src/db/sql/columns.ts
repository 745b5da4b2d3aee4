import type { Row } from './program.js';

/**
 * Readers of one column of a row, checking its type: rows are data from outside the process like any other,
 * and a column that changed type (a hand-edited database, a missed migration) must fail loudly, not spread.
 * PostgreSQL's `bigint` arrives as a number too: the engine parses it (see postgres-database.ts).
 */
export function readString(row: Row, column: string): string {
  const value = row[column];
  if (typeof value !== 'string') throw columnError(column, 'text', value);
  return value;
}

export function readNumber(row: Row, column: string): number {
  const value = row[column];
  if (typeof value !== 'number' || !Number.isFinite(value)) throw columnError(column, 'a number', value);
  return value;
}

export function readOptionalString(row: Row, column: string): string | null {
  const value = row[column];
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw columnError(column, 'text or null', value);
  return value;
}

export function readOptionalNumber(row: Row, column: string): number | null {
  const value = row[column];
  if (value === null || value === undefined) return null;
  if (typeof value !== 'number' || !Number.isFinite(value))
    throw columnError(column, 'a number or null', value);
  return value;
}

/** One of `values`, e.g. a status. */
export function readEnum<const T extends string>(row: Row, column: string, values: readonly T[]): T {
  const value = readString(row, column);
  const found = values.find((candidate) => candidate === value);
  if (found === undefined) throw columnError(column, values.join(' | '), value);
  return found;
}

function columnError(column: string, expected: string, value: unknown): Error {
  return new Error(`Column ${column} holds ${value === null ? 'null' : typeof value}, not ${expected}`);
}
