import { defineConfig } from 'drizzle-kit';

/** PostgreSQL, for several processes: `npm run db:generate` writes its migrations to drizzle/postgres/. */
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/db/postgres/schema.ts',
  out: './drizzle/postgres',
});
