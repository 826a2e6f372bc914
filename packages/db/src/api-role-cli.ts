// Creates or updates the API's database role (see api-role.ts): `node packages/db/dist/api-role-cli.js`, as the
// database owner (DATABASE_URL), after migrations. API_DATABASE_ROLE (default facilitator_api) and, to set its
// password, API_DATABASE_PASSWORD. The API then runs with DATABASE_URL naming that role.
import { grantApiRole } from './api-role';

async function main(): Promise<number> {
  const databaseUrl = process.env.DATABASE_URL;
  if (!databaseUrl) {
    process.stderr.write('configuration error: DATABASE_URL is required but not set\n');
    return 1;
  }
  const role = await grantApiRole(databaseUrl, { role: process.env.API_DATABASE_ROLE || undefined, password: process.env.API_DATABASE_PASSWORD || undefined });
  process.stdout.write(`role ${role}: reads every table, writes none of the worker's (batches, chain transactions, nonces)\n`);
  return 0;
}

main().then(
  (exitCode) => {
    process.exitCode = exitCode;
  },
  (err: unknown) => {
    process.stderr.write(`api role failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
