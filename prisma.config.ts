import { defineConfig } from 'prisma/config';

// Prisma 7 reads the datasource URL from here rather than from the schema.
export default defineConfig({
  schema: 'prisma/schema.prisma',
  migrations: { path: 'prisma/migrations' },
  datasource: { url: process.env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres' },
});
