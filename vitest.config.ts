import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    environment: 'node',
    pool: 'forks',
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // The compiled bot that `npm start` runs, and one real PostgreSQL server for the whole run (or
    // TEST_DATABASE_URL): see the files.
    globalSetup: ['test/support/build-once.ts', 'test/support/postgres-server.ts'],
  },
});
