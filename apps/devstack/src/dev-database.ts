import { Client } from 'pg';

export const DEFAULT_DEV_DATABASE = 'facilitator_dev';

function adminUrl(databaseUrl: string): string {
  const admin = new URL(databaseUrl);
  admin.pathname = '/postgres';
  return admin.toString();
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Makes the dev database ready for a fresh chain. `npm run dev` starts a new chain every time, so
 * records of an earlier run (above all the nonces of our keys) would be wrong: the default dev database
 * is recreated; another database must be empty, or DEV_RESET_DATABASE=true must allow recreating it.
 */
export async function prepareDevDatabase(databaseUrl: string, allowReset: boolean): Promise<'created' | 'recreated' | 'reused'> {
  const name = decodeURIComponent(new URL(databaseUrl).pathname.slice(1));
  const admin = new Client({ connectionString: adminUrl(databaseUrl) });
  await admin.connect();
  try {
    const { rowCount } = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount === 0) {
      await admin.query(`CREATE DATABASE ${quoted(name)}`);
      return 'created';
    }
    if (!(await holdsChainState(databaseUrl))) return 'reused';
    if (name !== DEFAULT_DEV_DATABASE && !allowReset) {
      throw new Error(
        `database "${name}" holds records of an earlier chain, and npm run dev starts a fresh chain: use an empty database, or set DEV_RESET_DATABASE=true to recreate it`,
      );
    }
    await admin.query(`DROP DATABASE ${quoted(name)} WITH (FORCE)`);
    await admin.query(`CREATE DATABASE ${quoted(name)}`);
    return 'recreated';
  } finally {
    await admin.end();
  }
}

async function holdsChainState(databaseUrl: string): Promise<boolean> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const { rows } = await client.query(`SELECT to_regclass('public.signer_nonces') IS NOT NULL AS migrated`);
    if (!rows[0].migrated) return false;
    const used = await client.query('SELECT (SELECT count(*) FROM signer_nonces) + (SELECT count(*) FROM verifications) AS n');
    return Number(used.rows[0].n) > 0;
  } finally {
    await client.end();
  }
}
