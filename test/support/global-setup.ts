// Provides the services (an embedded Postgres where none answers, see test-services.ts), prepares the
// template database every test database is cloned from, and sweeps up databases that crashed runs left
// behind. Imports only the migration runner: jest loads this file without its
// moduleNameMapper, so the generated Prisma client (with its `.js` imports) cannot be loaded here.
import { createHash, randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { applyMigrations } from '../../packages/db/src/migrations/apply-migrations';
import { findMigrationsDir } from '../../packages/db/src/migrations/find-migrations-dir';
import { readMigrations } from '../../packages/db/src/migrations/read-migrations';
import { provideTestServices } from './test-services';

const DEFAULT_ADMIN_URL = 'postgresql://postgres@127.0.0.1:5432/postgres';
const TEMPLATE_PREFIX = 'facilitator_test_template_';
// Throwaway databases carry their creation time, so a later run can tell leftovers from live ones.
const THROWAWAY_NAME = /^facilitator_test_(?:db|staging)_([0-9a-z]+)_[0-9a-f]+$/;
const LEFTOVER_AGE_MS = 60 * 60 * 1000;

export function adminDatabaseUrl(): string {
  return process.env.TEST_DATABASE_ADMIN_URL || DEFAULT_ADMIN_URL;
}

/** The admin URL with its database swapped for `databaseName`. */
export function databaseUrl(databaseName: string): string {
  const url = new URL(adminDatabaseUrl());
  url.pathname = `/${databaseName}`;
  return url.toString();
}

export function throwawayDatabaseName(kind: 'db' | 'staging'): string {
  return `facilitator_test_${kind}_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
}

export async function withAdminClient<T>(work: (admin: Client) => Promise<T>): Promise<T> {
  const admin = new Client({ connectionString: adminDatabaseUrl() });
  await admin.connect();
  try {
    return await work(admin);
  } finally {
    await admin.end();
  }
}

// Named after the migrations' contents: a changed or added migration gets a fresh template, and runs
// with the same migrations share one without rebuilding it.
export function templateDatabaseName(): string {
  const hash = createHash('sha256');
  for (const migration of readMigrations(findMigrationsDir())) hash.update(`${migration.name}:${migration.checksum}\n`);
  return TEMPLATE_PREFIX + hash.digest('hex').slice(0, 16);
}

/** Creates the migrated template unless it exists; safe to call from several processes at once. */
export async function ensureTemplateDatabase(): Promise<string> {
  const template = templateDatabaseName();
  await withAdminClient(async (admin) => {
    if (await databaseExists(admin, template)) return;
    // Built under a private name and renamed once complete, so nobody ever clones a half-migrated template.
    const staging = throwawayDatabaseName('staging');
    await admin.query(`CREATE DATABASE "${staging}"`);
    try {
      await applyMigrations(databaseUrl(staging));
      await admin.query(`ALTER DATABASE "${staging}" RENAME TO "${template}"`);
    } catch (err) {
      await admin.query(`DROP DATABASE IF EXISTS "${staging}" WITH (FORCE)`);
      const anotherRunPublishedItFirst = (err as { code?: string }).code === '42P04';
      if (!anotherRunPublishedItFirst) throw err;
    }
  });
  return template;
}

async function databaseExists(admin: Client, name: string): Promise<boolean> {
  const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  return rowCount === 1;
}

// Best effort: whatever cannot be dropped now (in use by a concurrent run) is left for a later run.
async function dropLeftoverDatabases(currentTemplate: string): Promise<void> {
  await withAdminClient(async (admin) => {
    const { rows } = await admin.query<{ datname: string }>(
      "SELECT datname FROM pg_database WHERE datname LIKE 'facilitator\\_test\\_%'",
    );
    for (const { datname } of rows) {
      const createdAt = THROWAWAY_NAME.exec(datname)?.[1];
      const isOldThrowaway = createdAt !== undefined && Date.now() - parseInt(createdAt, 36) > LEFTOVER_AGE_MS;
      const isStaleTemplate = datname.startsWith(TEMPLATE_PREFIX) && datname !== currentTemplate;
      if (isOldThrowaway) await admin.query(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`).catch(() => {});
      // Without FORCE: a concurrent run still cloning from an older template makes this fail, harmlessly.
      if (isStaleTemplate) await admin.query(`DROP DATABASE IF EXISTS "${datname}"`).catch(() => {});
    }
  });
}

export default async function globalSetup(): Promise<void> {
  const embedded = await provideTestServices((line) => process.stdout.write(`\n${line}\n`)).catch((err: unknown) => {
    // one line saying why and what to do (e.g. an embedded Postgres its user cannot reach), not a stack trace
    process.stderr.write(`\ntest services: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
  if (embedded) (globalThis as { embeddedTestPostgres?: typeof embedded }).embeddedTestPostgres = embedded;
  await ensureTemplateDatabase();
  await dropLeftoverDatabases(templateDatabaseName());
}
