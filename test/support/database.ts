// Each test file gets its own database, cloned from the migrated template (see global-setup.ts), so
// files running in parallel jest workers never see each other's rows.
import { createPgPool, createPrismaClient, type Pool, type PrismaClient } from '@facilitator/db';
import { databaseUrl, ensureTemplateDatabase, throwawayDatabaseName, withAdminClient } from './global-setup';

export interface TestDatabase {
  url: string;
  prisma: PrismaClient;
  /** plain `pg`, for the code whose hot path uses it (the transaction provider, the settlement repository) */
  pool: Pool;
  /** Disconnects `prisma` and `pool` and drops the database. */
  drop(): Promise<void>;
}

export interface EmptyTestDatabase {
  url: string;
  drop(): Promise<void>;
}

// globalSetup normally built the template already; this makes a worker build it if it did not run.
let templateName: Promise<string> | undefined;

/** A fresh database with every migration applied, plus a Prisma client connected to it. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = throwawayDatabaseName('db');
  try {
    await cloneTemplate(name);
  } catch (err) {
    // invalid_catalog_name: a concurrent run with other migrations swept our template away; rebuild it once.
    if ((err as { code?: string }).code !== '3D000') throw err;
    templateName = undefined;
    await cloneTemplate(name);
  }
  const url = databaseUrl(name);
  const prisma = createPrismaClient(url, { poolMax: 4 });
  const pool = createPgPool(url, 4);
  return {
    url,
    prisma,
    pool,
    drop: async () => {
      await Promise.all([prisma.$disconnect(), pool.end()]);
      await dropDatabase(name);
    },
  };
}

/** A database with nothing in it, not even the migrations: for testing the migration runner. */
export async function createEmptyDatabase(): Promise<EmptyTestDatabase> {
  const name = throwawayDatabaseName('db');
  await withAdminClient((admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE template0`));
  return { url: databaseUrl(name), drop: () => dropDatabase(name) };
}

async function cloneTemplate(name: string): Promise<void> {
  templateName ??= ensureTemplateDatabase();
  const template = await templateName;
  await withAdminClient((admin) => admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`));
}

async function dropDatabase(name: string): Promise<void> {
  await withAdminClient((admin) => admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
}
