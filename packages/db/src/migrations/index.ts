export { applyMigrations } from './apply-migrations';
