import { spawn } from 'node:child_process';
import path from 'node:path';
import { createEmptyDatabase } from '../../../test/support/database';
import { findMigrationsDir } from './migrations/find-migrations-dir';
import { readMigrations } from './migrations/read-migrations';

const CLI = path.join(__dirname, 'migrate-cli.ts');

interface CliResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
}

// Runs the real entry point in its own node process, as a deploy would (TypeScript via esbuild-register).
function runCli(env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['-r', require.resolve('esbuild-register'), CLI], { env });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (exitCode) => resolve({ exitCode, stdout, stderr }));
  });
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
      exitCode: 1,
      stdout: '',
      stderr: 'configuration error: DATABASE_URL is required but not set\n',
    });
  });

  it('applies pending migrations, says which, and exits 0', async () => {
    const db = await createEmptyDatabase();
    try {
      const names = readMigrations(findMigrationsDir()).map((migration) => migration.name);

      const first = await runCli(envWith(db.url));
      expect(first.exitCode).toBe(0);
      expect(first.stdout).toContain(`applied ${names.length} migration(s): ${names.join(', ')}`);

      const second = await runCli(envWith(db.url));
      expect(second.exitCode).toBe(0);
      expect(second.stdout).toBe('database is up to date: no pending migrations\n');
    } finally {
      await db.drop();
    }
  });
});
