import { createHash } from 'node:crypto';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createEmptyDatabase, type EmptyTestDatabase } from '../../../../test/support/database';
import { applyMigrations } from './apply-migrations';
import { findMigrationsDir } from './find-migrations-dir';
import { readMigrations } from './read-migrations';

let db: EmptyTestDatabase;
let scratchDirs: string[] = [];

beforeEach(async () => {
  db = await createEmptyDatabase();
});

afterEach(async () => {
  await db.drop();
  for (const dir of scratchDirs) rmSync(dir, { recursive: true, force: true });
  scratchDirs = [];
});

function migrationsDirWith(migrations: Record<string, string>): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'migrations-'));
  scratchDirs.push(dir);
  for (const [name, sql] of Object.entries(migrations)) addMigration(dir, name, sql);
  return dir;
}

function addMigration(migrationsDir: string, name: string, sql: string): void {
  mkdirSync(path.join(migrationsDir, name));
  writeFileSync(path.join(migrationsDir, name, 'migration.sql'), sql);
}

async function query<Row extends object>(sql: string): Promise<Row[]> {
  const client = new Client({ connectionString: db.url });
  await client.connect();
  try {
    return (await client.query<Row>(sql)).rows;
  } finally {
    await client.end();
  }
}

async function tableExists(table: string): Promise<boolean> {
  const rows = await query<{ found: string | null }>(`SELECT to_regclass('public.${table}')::text AS found`);
  return rows[0].found !== null;
}

describe('applyMigrations', () => {
  it("applies the repository's migrations to an empty database and records them as Prisma does", async () => {
    const migrationsDir = findMigrationsDir();
    const expectedNames = readMigrations(migrationsDir).map((migration) => migration.name);

    await expect(applyMigrations(db.url)).resolves.toEqual(expectedNames);

    expect(await tableExists('verifications')).toBe(true);
    expect(await tableExists('settlements')).toBe(true);
    const records = await query<Record<string, unknown>>(
      'SELECT * FROM "_prisma_migrations" ORDER BY migration_name',
    );
    expect(records).toHaveLength(expectedNames.length);
    const [first] = records;
    const firstFile = readFileSync(path.join(migrationsDir, expectedNames[0], 'migration.sql'));
    expect(first).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      checksum: createHash('sha256').update(firstFile).digest('hex'),
      finished_at: expect.any(Date),
      migration_name: expectedNames[0],
      logs: null,
      rolled_back_at: null,
      started_at: expect.any(Date),
      applied_steps_count: 1,
    });
  });

  it('does nothing when every migration is already applied', async () => {
    await applyMigrations(db.url);

    await expect(applyMigrations(db.url)).resolves.toEqual([]);
    const records = await query('SELECT 1 FROM "_prisma_migrations"');
    expect(records).toHaveLength(readMigrations(findMigrationsDir()).length);
  });

  it('applies only the migrations added since the last run, in name order', async () => {
    const migrationsDir = migrationsDirWith({ '0001_first': 'CREATE TABLE first (id int);' });
    await applyMigrations(db.url, { migrationsDir });
    addMigration(migrationsDir, '0003_third', 'ALTER TABLE second ADD COLUMN note text;');
    addMigration(migrationsDir, '0002_second', 'CREATE TABLE second (id int);');

    const logged: string[] = [];
    await expect(applyMigrations(db.url, { migrationsDir, log: (line) => logged.push(line) })).resolves.toEqual([
      '0002_second',
      '0003_third',
    ]);
    expect(logged).toEqual(['applying migration 0002_second', 'applying migration 0003_third']);
  });

  it('refuses to run when an applied migration was edited afterwards', async () => {
    const migrationsDir = migrationsDirWith({ '0001_first': 'CREATE TABLE first (id int);' });
    await applyMigrations(db.url, { migrationsDir });
    appendFileSync(path.join(migrationsDir, '0001_first', 'migration.sql'), '\nCREATE TABLE sneaky (id int);');
    addMigration(migrationsDir, '0002_second', 'CREATE TABLE second (id int);');

    await expect(applyMigrations(db.url, { migrationsDir })).rejects.toThrow(
      /migration 0001_first was changed after it was applied/,
    );
    expect(await tableExists('second')).toBe(false);
  });

  it('refuses to run past a migration that Prisma started but never finished', async () => {
    const migrationsDir = migrationsDirWith({ '0001_first': 'CREATE TABLE first (id int);' });
    await applyMigrations(db.url, { migrationsDir: migrationsDirWith({}) });
    await query(
      `INSERT INTO "_prisma_migrations" (id, checksum, migration_name) VALUES ('failed-deploy', 'x', '0001_first')`,
    );

    await expect(applyMigrations(db.url, { migrationsDir })).rejects.toThrow(/0001_first was started but never finished/);
  });

  it('rolls a failing migration back entirely, records nothing, and retries it next time', async () => {
    const migrationsDir = migrationsDirWith({
      '0001_first': 'CREATE TABLE first (id int);',
      '0002_broken': 'CREATE TABLE second (id int);\nSELECT * FROM missing_table;',
    });

    await expect(applyMigrations(db.url, { migrationsDir })).rejects.toThrow(
      /migration 0002_broken failed: relation "missing_table" does not exist/,
    );
    expect(await tableExists('first')).toBe(true);
    expect(await tableExists('second')).toBe(false);
    expect(await query('SELECT 1 FROM "_prisma_migrations"')).toHaveLength(1);

    writeFileSync(path.join(migrationsDir, '0002_broken', 'migration.sql'), 'CREATE TABLE second (id int);');
    await expect(applyMigrations(db.url, { migrationsDir })).resolves.toEqual(['0002_broken']);
  });

  it('applies each migration once when two runs start together', async () => {
    // The sleep keeps the first run inside its migration while the second one starts.
    const migrationsDir = migrationsDirWith({
      '0001_slow': 'CREATE TABLE slow (id int);\nSELECT pg_sleep(0.3);',
      '0002_after': 'INSERT INTO slow (id) VALUES (1);',
    });

    const [first, second] = await Promise.all([
      applyMigrations(db.url, { migrationsDir }),
      applyMigrations(db.url, { migrationsDir }),
    ]);

    expect([...first, ...second].sort()).toEqual(['0001_slow', '0002_after']);
    expect([first, second]).toContainEqual([]);
    expect(await query('SELECT id FROM slow')).toEqual([{ id: 1 }]);
    expect(await query('SELECT 1 FROM "_prisma_migrations"')).toHaveLength(2);
  });
});
