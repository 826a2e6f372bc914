// Applies pending migrations to DATABASE_URL: `node packages/db/dist/migrate-cli.js`.
// No default URL on purpose: migrating a database nobody named is worse than refusing to start.
import { applyMigrations } from './migrations';

async function main(): Promise<number> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    process.stderr.write('configuration error: DATABASE_URL is required but not set\n');
    return 1;
  }
  const applied = await applyMigrations(databaseUrl, { log: (message) => process.stdout.write(`${message}\n`) });
  process.stdout.write(
    applied.length === 0
      ? 'database is up to date: no pending migrations\n'
      : `applied ${applied.length} migration(s): ${applied.join(', ')}\n`,
  );
  return 0;
}

main().then(
  (exitCode) => {
    process.exitCode = exitCode;
  },
  (err: unknown) => {
    process.stderr.write(`migration failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
