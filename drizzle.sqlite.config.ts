import { defineConfig } from 'drizzle-kit';

/** SQLite, the embedded default: `npm run db:generate` writes its migrations to drizzle/sqlite/. */
export default defineConfig({
  dialect: 'sqlite',
  schema: './src/db/sqlite/schema.ts',
  out: './drizzle/sqlite',
});
