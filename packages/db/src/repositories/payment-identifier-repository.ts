import type { Pool } from '../pg-pool';
import { runQuery } from './pg-query';
import { settlementFromColumns } from './settlement-row';
import { LOOKUP_LIMIT, type SettlementRow } from './settlements';

/** One payment identifier and the payment it names; addresses, nonce and fingerprint lowercase. */
export interface PaymentIdentifierBinding {
  chainId: number;
  paymentId: string;
  /** the payTo: ids are scoped per merchant */
  merchant: string;
  authorizationFingerprint: string;
  tokenAddress: string;
  payer: string;
  nonce: string;
}

const SQL = {
  insert: `
    INSERT INTO payment_identifiers (chain_id, payment_id, merchant, authorization_fingerprint, token_address, payer, nonce)
    VALUES ($1, $2, $3, $4, $5, $6, $7)
    ON CONFLICT (chain_id, payment_id, merchant) DO NOTHING
    RETURNING authorization_fingerprint`,
  bound: `SELECT authorization_fingerprint FROM payment_identifiers WHERE chain_id = $1 AND payment_id = $2 AND merchant = $3`,
  // the binding by its primary key's prefix, then its payment's settlements by their (chain, token, payer,
  // nonce) index; the fingerprint keeps another authorization that shares the nonce out
  settlements: `
    SELECT s.* FROM payment_identifiers p
      JOIN settlements s ON s.chain_id = p.chain_id AND s.token_address = p.token_address AND s.payer = p.payer
                        AND s.nonce = p.nonce AND s.authorization_fingerprint = p.authorization_fingerprint
     WHERE p.chain_id = $1 AND p.payment_id = $2
     ORDER BY s.created_at DESC, s.id DESC
     LIMIT ${LOOKUP_LIMIT}`,
  // oldest first through the created_at index; a binding of a payment with any settlement (settled, or failed
  // and kept) stays as long as that settlement does: the lookup by payment id finds it
  deleteUnsettled: `
    WITH doomed AS (
      SELECT p.chain_id, p.payment_id, p.merchant FROM payment_identifiers p
       WHERE p.created_at < $1
         AND NOT EXISTS (SELECT 1 FROM settlements s WHERE s.chain_id = p.chain_id AND s.token_address = p.token_address
                                                      AND s.payer = p.payer AND s.nonce = p.nonce)
       ORDER BY p.created_at LIMIT $2)
    DELETE FROM payment_identifiers p USING doomed d
     WHERE p.chain_id = d.chain_id AND p.payment_id = d.payment_id AND p.merchant = d.merchant RETURNING 1`,
};

/**
 * Owner of `payment_identifiers`: the x402 `payment-identifier` of a payment, bound to it for good
 * (docs/decisions.md, "Payment identifiers").
 */
export class PaymentIdentifierRepository {
  constructor(private readonly pool: Pool) {}

  /**
   * Binds the id to this payment unless it is bound already; answers the fingerprint it is bound to (this
   * one, or the other payment's). Two statements on purpose: the read after a conflicting insert runs in a
   * new snapshot, so it sees the row another process committed while this insert waited on it (one
   * statement with a CTE would not), and two API processes racing with one id always agree on the winner.
   */
  async bind(binding: PaymentIdentifierBinding): Promise<string> {
    const key = [binding.chainId, binding.paymentId, binding.merchant];
    const inserted = await runQuery(this.pool, {
      name: 'payment_identifier_insert',
      text: SQL.insert,
      values: [...key, binding.authorizationFingerprint, binding.tokenAddress, binding.payer, binding.nonce],
    });
    if (inserted.length > 0) return inserted[0].authorization_fingerprint as string;
    const [bound] = await runQuery(this.pool, { name: 'payment_identifier_bound', text: SQL.bound, values: key });
    return bound.authorization_fingerprint as string;
  }

  /** Retention: deletes up to `limit` bindings made before `before` whose payment has no settlement; how many went. */
  async deleteUnsettled(before: Date, limit: number): Promise<number> {
    return (await runQuery(this.pool, { name: 'payment_identifier_delete_unsettled', text: SQL.deleteUnsettled, values: [before, limit] })).length;
  }

  /** The settlements of the payment(s) this id names on this network (one per merchant that bound it), newest first. */
  async findSettlements(chainId: number, paymentId: string): Promise<SettlementRow[]> {
    const rows = await runQuery(this.pool, { name: 'payment_identifier_settlements', text: SQL.settlements, values: [chainId, paymentId] });
    return rows.map(settlementFromColumns);
  }
}
