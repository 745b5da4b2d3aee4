import { integer } from 'drizzle-orm/sqlite-core';

/** Milliseconds since the epoch; every time column uses it so ordering and arithmetic are plain integers. */
export const millis = (name: string) => integer(name).notNull();
export const createdAt = () => millis('created_at');
