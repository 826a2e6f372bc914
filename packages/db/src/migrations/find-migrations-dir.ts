import { existsSync } from 'node:fs';
import path from 'node:path';

const MIGRATIONS_RELATIVE_TO_ROOT = path.join('prisma', 'migrations');

/**
 * The repository's `prisma/migrations`, found by walking up from this file. Walking up (rather than a
 * fixed `../..`) keeps it right whether this runs from `src/` under jest or from the compiled `dist/`.
 */
export function findMigrationsDir(startDir: string = __dirname): string {
  let dir = path.resolve(startDir);
  for (;;) {
    const candidate = path.join(dir, MIGRATIONS_RELATIVE_TO_ROOT);
    if (existsSync(path.join(candidate, 'migration_lock.toml'))) return candidate;
    const parent = path.dirname(dir);
    if (parent === dir) {
      throw new Error(`no ${MIGRATIONS_RELATIVE_TO_ROOT} directory found above ${startDir}`);
    }
    dir = parent;
  }
}
