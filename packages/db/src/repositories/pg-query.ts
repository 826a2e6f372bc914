import type { Pool, PoolClient, QueryConfig } from 'pg';

export type Row = Record<string, unknown>;

/** Errors of our own pg statements are the database's, whatever their shape (e.g. a refused connection). */
export function tagAsDatabaseError(err: unknown): unknown {
  if (typeof err === 'object' && err !== null) (err as { dependency?: string }).dependency = 'database';
  return err;
}

/** A named (so prepared once per connection) statement through plain `pg`, its errors tagged as the database's. */
export async function runQuery(db: Pool | PoolClient, config: QueryConfig & { name: string }): Promise<Row[]> {
  try {
    return (await db.query<Row>(config)).rows;
  } catch (err) {
    throw tagAsDatabaseError(err);
  }
}

// pg returns timestamp columns as Dates, but as ISO text inside json_agg / to_jsonb: both read the same.
export const dateColumn = (value: unknown): Date => (value instanceof Date ? value : new Date(value as string));
export const optionalDateColumn = (value: unknown): Date | null => (value == null ? null : dateColumn(value));

/** A named statement that changes rows (a DELETE, mostly): how many it changed. */
export async function runCount(db: Pool | PoolClient, config: QueryConfig & { name: string }): Promise<number> {
  try {
    return (await db.query(config)).rowCount ?? 0;
  } catch (err) {
    throw tagAsDatabaseError(err);
  }
}

/** Runs `work` in one database transaction on one pooled connection: committed when it returns, rolled back when it throws. */
export async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect().catch((err: unknown) => {
    throw tagAsDatabaseError(err);
  });
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // a connection that cannot even roll back is not given back to the pool
    await client.query('ROLLBACK').catch(() => (broken = true));
    throw error;
  } finally {
    client.release(broken);
  }
}
