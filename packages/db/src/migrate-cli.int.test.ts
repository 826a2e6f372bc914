import path from 'node:path';
import { createEmptyDatabase } from '../../../test/support/database';
import { runNodeProgram, type ProgramRun } from '../../../test/support/node-program';
import { findMigrationsDir } from './migrations/find-migrations-dir';
import { readMigrations } from './migrations/read-migrations';

const CLI = path.join(__dirname, 'migrate-cli.ts');

// Runs the real entry point in its own node process, as a deploy would (TypeScript via esbuild-register).
function runCli(env: NodeJS.ProcessEnv): Promise<ProgramRun> {
  return runNodeProgram(['-r', require.resolve('esbuild-register'), CLI], env);
}

function envWith(databaseUrl: string | undefined): NodeJS.ProcessEnv {
  const { DATABASE_URL: _ignored, ...env } = process.env;
  return databaseUrl === undefined ? env : { ...env, DATABASE_URL: databaseUrl };
}

describe('migrate-cli', () => {
  it.each([
    ['unset', undefined],
    ['empty', ''],
  ])('exits 1 with a one-line configuration error when DATABASE_URL is %s', async (_case, databaseUrl) => {
    const result = await runCli(envWith(databaseUrl));

    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: 'configuration error: DATABASE_URL is required but not set\n',
    });
  });

  it('applies pending migrations, says which, and exits 0', async () => {
    const db = await createEmptyDatabase();
    try {
      const names = readMigrations(findMigrationsDir()).map((migration) => migration.name);

      const first = await runCli(envWith(db.url));
      expect(first.code).toBe(0);
      expect(first.stdout).toContain(`applied ${names.length} migration(s): ${names.join(', ')}`);

      const second = await runCli(envWith(db.url));
      expect(second.code).toBe(0);
      expect(second.stdout).toBe('database is up to date: no pending migrations\n');
    } finally {
      await db.drop();
    }
  });
});
