// Stores factory rows as they are (ids, states and timestamps included) in a migrated database, for the
// tests that need a row in a given state without walking the state machine to it.
import type { Pool } from 'pg';
import type { Settlement, Verification } from '../generated/prisma/client';

/** Every column of `row`, its field names in snake_case (the schema maps each field so). */
async function insertRow(pool: Pool, table: 'verifications' | 'settlements', row: Record<string, unknown>): Promise<void> {
  const fields = Object.keys(row);
  const columns = fields.map((f) => f.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
  // json columns take the JSON text; every other value goes as it is (the column gives the parameter its type)
  const values = fields.map((f) => {
    const value = row[f];
    return value !== null && typeof value === 'object' && !(value instanceof Date) ? JSON.stringify(value) : value;
  });
  await pool.query(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${values.map((_, i) => `$${i + 1}`).join(', ')})`, values);
}

export function insertVerificationRow(pool: Pool, row: Verification): Promise<void> {
  return insertRow(pool, 'verifications', row);
}

/** The settlement and its verification (which must not be stored yet). */
export async function insertSettlementWithVerification(pool: Pool, row: Settlement & { verification: Verification }): Promise<void> {
  const { verification, ...settlement } = row;
  await insertVerificationRow(pool, verification);
  await insertRow(pool, 'settlements', settlement);
}
