import { defineConfig } from 'vitest/config';

/** What both `npm test` and `npm run test:fast` (vitest.fast.config.ts) run with. */
export const COMMON_TEST_OPTIONS = {
  include: ['test/**/*.test.ts'],
  environment: 'node',
  pool: 'forks',
  // Test files share each worker's loaded modules (Bolt, the OpenAI client, drizzle…) instead of loading
  // them again per file; every suite builds its own bot, fakes and database, so nothing else is shared.
  isolate: false,
  // Most of a test's time is spent waiting for child processes and fake servers: two files at once, even
  // on two cores.
  maxWorkers: 2,
  testTimeout: 20_000,
  hookTimeout: 30_000,
} as const;

/** `npm test`: every suite. `npm run test:fast` (vitest.fast.config.ts) runs the in-process ones only. */
export default defineConfig({
  test: {
    ...COMMON_TEST_OPTIONS,
    include: [...COMMON_TEST_OPTIONS.include],
    // The compiled bot that `npm start` runs, and one real PostgreSQL server for the whole run (or
    // TEST_DATABASE_URL): see the files.
    globalSetup: ['test/support/build-once.ts', 'test/support/postgres-server.ts'],
  },
});
