import { Pool } from 'pg';

/**
 * A plain `pg` pool for the statements on the hot paths: verification, starting a settlement, and the
 * worker's settlement steps and transaction store. Measured here, a prepared statement through `pg` costs
 * about a tenth of the CPU of the same query through Prisma; everything else keeps Prisma's types and
 * convenience.
 */
export function createPgPool(databaseUrl: string, max = 10): Pool {
  const pool = new Pool({
    connectionString: databaseUrl,
    max,
    // awaited before a new connection is handed out
    onConnect: async (client) => {
      // A connection lost while checked out (a send lock held across an RPC call, a transaction between
      // statements) must not crash the process: pg-pool listens to a client only while it is idle, and a
      // client with no query running emits the server's "terminating connection" as an 'error' event. Its
      // next query fails (tagged as the database being unavailable) and the pool drops it on release.
      client.on('error', () => undefined);
      // These statements are small and indexed; Postgres's JIT (on by default) compiles any plan whose
      // estimate passes jit_above_cost, which tables without statistics yet (no ANALYZE since they filled)
      // easily do: measured by bench:verify, it quadrupled Postgres's CPU per verification (~500 µs against
      // ~100 µs) and cost 40 % of verify's rate. A session setting, not a startup option, so PgBouncer
      // accepts it; should it fail, the connection is still used, as it would have been without it.
      await client.query('SET jit = off').catch(() => undefined);
    },
  });
  // an idle client losing its server (e.g. a Postgres restart) must not crash the process
  pool.on('error', () => undefined);
  return pool;
}

export type { Pool } from 'pg';
