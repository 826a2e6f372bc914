import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { findMigrationsDir } from './find-migrations-dir';
import { readMigrations, type MigrationFile } from './read-migrations';

// The key `prisma migrate deploy` locks with, so this runner and Prisma's own never migrate at once.
const PRISMA_MIGRATE_LOCK_KEY = 72707369;

// Give up rather than hang forever behind a lock leaked by a stuck session.
const LOCK_TIMEOUT = '60s';

// Prisma's own definition of its bookkeeping table, so `prisma migrate status`/`deploy` can take over
// wherever the engine can be downloaded.
const CREATE_MIGRATIONS_TABLE = `
  CREATE TABLE IF NOT EXISTS "_prisma_migrations" (
    "id"                  VARCHAR(36) PRIMARY KEY NOT NULL,
    "checksum"            VARCHAR(64) NOT NULL,
    "finished_at"         TIMESTAMPTZ,
    "migration_name"      VARCHAR(255) NOT NULL,
    "logs"                TEXT,
    "rolled_back_at"      TIMESTAMPTZ,
    "started_at"          TIMESTAMPTZ NOT NULL DEFAULT now(),
    "applied_steps_count" INTEGER NOT NULL DEFAULT 0
  )`;

interface ApplyMigrationsOptions {
  /** Defaults to the repository's `prisma/migrations`. */
  migrationsDir?: string;
  log?: (message: string) => void;
}

interface AppliedMigrationRow {
  migration_name: string;
  checksum: string;
  finished_at: Date | null;
}

/** Applies every migration not yet recorded in `_prisma_migrations`, in name order; returns their names. */
export async function applyMigrations(databaseUrl: string, options: ApplyMigrationsOptions = {}): Promise<string[]> {
  const migrations = readMigrations(options.migrationsDir ?? findMigrationsDir());
  const log = options.log ?? (() => {});
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    // A session lock: closing the connection below releases it, even when a migration fails.
    await client.query(`SET lock_timeout = '${LOCK_TIMEOUT}'`);
    await client.query('SELECT pg_advisory_lock($1)', [PRISMA_MIGRATE_LOCK_KEY]).catch((err: unknown) => {
      const timedOut = (err as { code?: string }).code === '55P03';
      if (!timedOut) throw err;
      throw new Error(
        `could not take the migration lock (advisory lock ${PRISMA_MIGRATE_LOCK_KEY}) within ${LOCK_TIMEOUT}: ` +
          'another migration is running or a stuck session holds it',
        { cause: err },
      );
    });
    await client.query('RESET lock_timeout');
    // Created under the lock so that two first runs cannot race to create it.
    await client.query(CREATE_MIGRATIONS_TABLE);
    const pending = await findPendingMigrations(client, migrations);
    for (const migration of pending) {
      log(`applying migration ${migration.name}`);
      await applyOne(client, migration);
    }
    return pending.map((migration) => migration.name);
  } finally {
    await client.end();
  }
}

async function findPendingMigrations(client: Client, migrations: MigrationFile[]): Promise<MigrationFile[]> {
  // Rows Prisma marked rolled back count as not applied, as they do for `prisma migrate deploy`.
  const { rows } = await client.query<AppliedMigrationRow>(
    'SELECT migration_name, checksum, finished_at FROM "_prisma_migrations" WHERE rolled_back_at IS NULL',
  );
  const applied = new Map(rows.map((row) => [row.migration_name, row]));
  return migrations.filter((migration) => {
    const row = applied.get(migration.name);
    if (row === undefined) return true;
    if (row.finished_at === null) {
      throw new Error(
        `migration ${migration.name} was started but never finished (a failed \`prisma migrate deploy\`?); ` +
          'inspect the database and resolve it with `prisma migrate resolve` before migrating again',
      );
    }
    if (row.checksum !== migration.checksum) {
      throw new Error(
        `migration ${migration.name} was changed after it was applied (checksum ${row.checksum} in the database, ` +
          `${migration.checksum} on disk); restore it and put the change in a new migration`,
      );
    }
    return false;
  });
}

// One transaction per migration: a failure leaves neither its changes nor its record behind, so the
// next run simply retries it. (Statements that cannot run in a transaction are therefore not supported.)
async function applyOne(client: Client, migration: MigrationFile): Promise<void> {
  await client.query('BEGIN');
  try {
    await client.query(migration.sql);
    await client.query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name, started_at, finished_at, applied_steps_count)
       VALUES ($1, $2, $3, now(), clock_timestamp(), 1)`,
      [randomUUID(), migration.checksum, migration.name],
    );
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw new Error(`migration ${migration.name} failed: ${err instanceof Error ? err.message : String(err)}`, {
      cause: err,
    });
  }
}
