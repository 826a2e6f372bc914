import { Client } from 'pg';

/**
 * The tables only the worker writes: what its keys sign is read back from them (settlement batches and their
 * items, chain transactions, their signed versions, the keys' nonces, the foreign executions the finality
 * watcher follows). The API reads them (a settlement's progress); a compromised API process must not be able
 * to write them (issue 40).
 */
export const WORKER_ONLY_TABLES = [
  'settlement_batches',
  'settlement_batch_items',
  'chain_transactions',
  'chain_transaction_attempts',
  'signer_nonces',
  // the executions of someone else's that settled a settlement: the finality watcher follows their blocks
  'settlement_foreign_executions',
  // a merchant's fees in flight: written only by the settlements' trigger (as the migration's owner)
  'merchant_fees_in_flight',
  '_prisma_migrations',
] as const;

export interface ApiRoleOptions {
  /** default facilitator_api */
  role?: string;
  /** set as the role's password when given (it may log in with DATABASE_URL=postgres://<role>:<password>@…) */
  password?: string;
}

/**
 * Creates (or updates) the API's database role: it may read every table and write every table but the
 * worker-only ones, and owns nothing (no DDL: migrations run as the owner). Run as the database owner after
 * each migration (`npm run db:api-role`): tables a migration adds are granted then. Idempotent.
 */
export async function grantApiRole(databaseUrl: string, options: ApiRoleOptions = {}): Promise<string> {
  const role = options.role ?? 'facilitator_api';
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(role)) throw new Error(`invalid role name ${JSON.stringify(role)}: lowercase letters, digits and _`);
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const exists = await client.query('SELECT 1 FROM pg_roles WHERE rolname = $1', [role]);
    if (exists.rowCount === 0) await client.query(`CREATE ROLE ${role} LOGIN`);
    if (options.password !== undefined) await client.query(`ALTER ROLE ${role} PASSWORD ${client.escapeLiteral(options.password)}`);
    const { rows } = await client.query<{ db: string }>('SELECT current_database() AS db');
    await client.query('BEGIN');
    await client.query(`GRANT CONNECT ON DATABASE ${client.escapeIdentifier(rows[0].db)} TO ${role}`);
    await client.query(`GRANT USAGE ON SCHEMA public TO ${role}`);
    await client.query(`GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO ${role}`);
    await client.query(`GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO ${role}`);
    const workerOnly = WORKER_ONLY_TABLES.map((t) => client.escapeIdentifier(t)).join(', ');
    await client.query(`REVOKE INSERT, UPDATE, DELETE, TRUNCATE ON ${workerOnly} FROM ${role}`);
    await client.query('COMMIT');
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
  return role;
}
