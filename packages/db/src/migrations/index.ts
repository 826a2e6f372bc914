export { applyMigrations, type ApplyMigrationsOptions } from './apply-migrations';
export { findMigrationsDir } from './find-migrations-dir';
