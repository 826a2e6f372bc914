import { Pool } from 'pg';

/**
 * A plain `pg` pool for the statements on the hot paths: verification, starting a settlement, and the
 * worker's settlement steps and transaction store. Measured here, a prepared statement through `pg` costs
 * about a tenth of the CPU of the same query through Prisma; everything else keeps Prisma's types and
 * convenience.
 */
export function createPgPool(databaseUrl: string, max = 10): Pool {
  const pool = new Pool({ connectionString: databaseUrl, max });
  // an idle client losing its server (e.g. a Postgres restart) must not crash the process
  pool.on('error', () => undefined);
  // nor one checked out (a send lock held across an RPC call, a transaction between statements): pg-pool
  // listens to a client only while it is idle, and a client with no query running emits the server's
  // "terminating connection" as an 'error' event. Its next query fails (tagged as the database being
  // unavailable) and the pool drops it when it is released.
  pool.on('connect', (client) => client.on('error', () => undefined));
  return pool;
}

export type { Pool } from 'pg';
