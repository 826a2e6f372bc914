import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export interface MigrationFile {
  name: string;
  sql: string;
  /** sha256 of the file's bytes, hex: the value Prisma stores in `_prisma_migrations.checksum`. */
  checksum: string;
}

/** Every `<name>/migration.sql` under `migrationsDir`, in name order (the timestamp prefix orders them). */
export function readMigrations(migrationsDir: string): MigrationFile[] {
  return readdirSync(migrationsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(migrationsDir, entry.name, 'migration.sql')))
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const bytes = readFileSync(path.join(migrationsDir, name, 'migration.sql'));
      return { name, sql: bytes.toString('utf8'), checksum: createHash('sha256').update(bytes).digest('hex') };
    });
}
