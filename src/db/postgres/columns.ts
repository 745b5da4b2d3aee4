import { bigint } from 'drizzle-orm/pg-core';

/**
 * Milliseconds since the epoch, as in the SQLite schema (src/db/sqlite/, which this one mirrors
 * table by table): `bigint`, read back as a JavaScript number.
 */
export const time = (name: string) => bigint(name, { mode: 'number' });
export const millis = (name: string) => time(name).notNull();
export const createdAt = () => millis('created_at');
