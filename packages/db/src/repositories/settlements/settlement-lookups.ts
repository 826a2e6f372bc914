import { settlementFromColumns } from '../settlement-row';
import { runQuery } from '../pg-query';
import type { PaymentNonce } from '../payment-nonce';
import { SettlementTable, type SettlementRow } from './settlement-table';

/** The most settlements one public lookup answers (a payment has one live settlement; retries after failures add a few). */
export const LOOKUP_LIMIT = 20;

/** The public lookup and the status record: settlements found by transaction, by payer nonce, by verification. */
export class SettlementLookups extends SettlementTable {
  /**
   * Public lookup: the settlements whose payer transfer is this transaction (several when the atomic path
   * batched them into one), by the partial (chain_id, settlement_tx_hash) index.
   */
  async findByTransaction(chainId: number, txHash: string): Promise<SettlementRow[]> {
    const rows = await runQuery(this.pool, {
      name: 'settlements_by_transaction',
      text: `SELECT * FROM settlements WHERE chain_id = $1 AND settlement_tx_hash = $2 AND settlement_tx_hash IS NOT NULL
              ORDER BY created_at, id LIMIT ${LOOKUP_LIMIT}`,
      values: [chainId, txHash],
    });
    return rows.map(settlementFromColumns);
  }

  /**
   * Public lookup: the settlements of a payer's nonce in any of `nonceSpaces` (the lookup names a payer and a
   * nonce, not the mechanism), newest first, by their payment index.
   */
  async findByPayerNonce({ chainId, nonceSpaces, payer, nonce }: Omit<PaymentNonce, 'nonceSpace'> & { nonceSpaces: readonly string[] }): Promise<SettlementRow[]> {
    const rows = await runQuery(this.pool, {
      name: 'settlements_by_payer_nonce_spaces',
      text: `SELECT * FROM settlements WHERE chain_id = $1 AND nonce_space = ANY($2::text[]) AND payer = $3 AND nonce = $4
              ORDER BY created_at DESC, id DESC LIMIT ${LOOKUP_LIMIT}`,
      values: [chainId, [...nonceSpaces], payer, nonce],
    });
    return rows.map(settlementFromColumns);
  }

  findSettledForVerification(verificationId: string): Promise<SettlementRow | null> {
    return this.prisma.settlement.findFirst({ where: { verificationId, state: 'settled' } });
  }
}
