/**
 * Every table, described once: src/db/sqlite/schema.ts and src/db/postgres/schema.ts build each engine's drizzle
 * table from each of these, and `npm run db:generate` writes both engines' migrations from those.
 */
export * from './approval-limits.js';
export * from './approvals.js';
export * from './audit.js';
export * from './console.js';
export * from './conversations.js';
export * from './daily-totals.js';
export * from './installations.js';
export * from './notes.js';
export * from './slack.js';
