import type { Pool } from '../pg-pool';
import { runQuery } from './pg-query';

/** An upto payment settled for 0: its payment key (as settlements.payment_key), where, for whom, from which verification. */
export interface NothingSettled {
  paymentKey: string;
  chainId: number;
  /** lowercase */
  merchant: string;
  verificationId: string;
}

/**
 * Owner of `nothing_settled_payments`: the upto payments their merchants settled for 0. Nothing is sent for
 * them, so without this row the payer's permit would stay spendable for its maximum by whoever holds the
 * payload; with it, the 0 is the payment's outcome and every later settle of it is answered with that.
 */
export class NothingSettledRepository {
  constructor(private readonly pool: Pool) {}

  /** Records the 0 (again: kept as first recorded). */
  async record(row: NothingSettled): Promise<void> {
    await runQuery(this.pool, {
      name: 'nothingSettled.record',
      text: `INSERT INTO nothing_settled_payments (payment_key, chain_id, merchant, verification_id) VALUES ($1, $2, $3, $4) ON CONFLICT (payment_key) DO NOTHING`,
      values: [row.paymentKey, row.chainId, row.merchant, row.verificationId],
    });
  }

  /** Whether this payment was settled for 0. */
  async isRecorded(paymentKey: string): Promise<boolean> {
    const rows = await runQuery(this.pool, {
      name: 'nothingSettled.find',
      text: `SELECT 1 FROM nothing_settled_payments WHERE payment_key = $1`,
      values: [paymentKey],
    });
    return rows.length > 0;
  }
}
