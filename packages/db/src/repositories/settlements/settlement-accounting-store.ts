import { runQuery } from '../pg-query';
import { SettlementTable } from './settlement-table';

export interface FeeReverts {
  count: number;
  lastAt: Date | null;
}

// Costly failures (the payer's payments that failed on chain at our or the merchant's expense) are defined
// once, by the SQL function settlement_costly_failure (migration 20261124150300_accounting_payer_in_flight).
// A costly failure always carries one of our transactions: written out, the condition lets the planner read
// only those (the partial indexes of migration 20261124150300), not the failures a stranger makes for free.
const SENT = `(fee_tx_hash IS NOT NULL OR settlement_tx_hash IS NOT NULL OR error_details ? 'tx_hash' OR error_details ? 'wallet_deploy_tx_hash')`;

// both counts in one statement: every settle request and every check_allowance asks them together
const FAILURES_OF_PAYMENT = `
  SELECT p.failures AS payer_failures, p.last_at AS payer_last_at, m.failures AS merchant_failures, m.last_at AS merchant_last_at
    FROM (SELECT count(*)::int AS failures, max(updated_at) AS last_at FROM settlements
           WHERE payer = $1 AND chain_id = $3 AND state = 'failed' AND ${SENT} AND updated_at > $4 AND settlement_costly_failure(settlements)) p,
         (SELECT count(*)::int AS failures, max(updated_at) AS last_at FROM settlements
           WHERE merchant = $2 AND chain_id = $3 AND state = 'failed' AND ${SENT} AND updated_at > $4 AND settlement_costly_failure(settlements)) m`;

/** Failure accounting: costly failures of a payer's payments and of a merchant's, and who has paid whom. */
export class SettlementAccountingStore extends SettlementTable {
  /**
   * Costly failures on chain (see settlement_costly_failure) since `since` of this payer's payments, and of
   * payments to this merchant whoever the payers: one statement, as every settle request and check_allowance ask both.
   */
  async failuresOfPayment(payer: string, merchant: string, chainId: number, since: Date): Promise<{ payer: FeeReverts; merchant: FeeReverts }> {
    const [row] = await runQuery(this.pool, { name: 'failures_of_payment', text: FAILURES_OF_PAYMENT, values: [payer, merchant, chainId, since] });
    const at = (v: unknown) => (v == null ? null : new Date(v as string));
    return { payer: { count: row.payer_failures as number, lastAt: at(row.payer_last_at) }, merchant: { count: row.merchant_failures as number, lastAt: at(row.merchant_last_at) } };
  }

  /** Whether this payer has a settled payment to this merchant on this chain. */
  async hasPaid(payer: string, merchant: string, chainId: number): Promise<boolean> {
    const rows = await runQuery(this.pool, {
      name: 'settlement_has_paid',
      text: `SELECT 1 FROM settlements WHERE merchant = $1 AND payer = $2 AND chain_id = $3 AND state = 'settled' LIMIT 1`,
      values: [merchant, payer, chainId],
    });
    return rows.length > 0;
  }
}
