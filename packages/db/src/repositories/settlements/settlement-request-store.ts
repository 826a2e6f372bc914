import { NONCE_CONSUMING_STATES, settlementFromColumns } from '../settlement-row';
import { runQuery } from '../pg-query';
import type { PaymentNonce } from '../payment-nonce';
import type { FeeReverts } from './settlement-accounting-store';
import { SettlementTable, type SettlementRow } from './settlement-table';

/** What starting a settlement stores; the rest of the row starts empty, in state `pending`. */
export interface NewSettlementRow {
  id: string;
  verificationId: string;
  paymentKey: string;
  surface: string;
  chainId: number;
  /** the network's CAIP-2 id, as on its verification */
  network: string;
  tokenAddress: string;
  payer: string;
  merchant: string;
  amount: string;
  nonce: string;
  /** the fingerprint of the authorization this settlement executes (authorizationFingerprint) */
  authorizationFingerprint: string;
  /** the payment's mechanism and scheme, the contract that records its nonce, and its stored payload, as on its verification */
  mechanism: string;
  scheme: string;
  nonceSpace: string;
  /** null only for a verification an older process stored during a rolling deploy (settlement rebuilds it from the columns) */
  payload: object | null;
  feeAmount: string;
  metadata?: object | null;
}

// One statement: the new settlement with its first history row, or the live settlement of the payment.
const CREATE_OR_GET = `
  WITH created AS (
    INSERT INTO settlements
      (id, verification_id, payment_key, surface, state, chain_id, token_address, payer, merchant, amount, nonce, fee_amount, metadata,
       authorization_fingerprint, mechanism, scheme, nonce_space, payload, network, created_at, updated_at)
    VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $8, $9, $10, $11, $12::jsonb, $13, $14, $15, $16, $17::jsonb, $18, now(), now())
    ON CONFLICT (payment_key) DO NOTHING
    RETURNING *
  ), history AS (
    INSERT INTO settlement_transitions (settlement_id, from_state, to_state) SELECT id, NULL, 'pending' FROM created
  )
  SELECT *, true AS created FROM created
  UNION ALL
  SELECT *, false AS created FROM settlements WHERE payment_key = $3 AND NOT EXISTS (SELECT 1 FROM created)`;

/**
 * The settle request's side: a sequential settlement whose transfer the worker has not committed to (fee
 * claimed, in flight or mined) is withheld; already withheld (a repeated request) counts as withheld.
 */
const WITHHOLD_TRANSFER = `
  UPDATE settlements SET transfer_decision = 'withheld'
   WHERE id = $1 AND settlement_mode = 'sequential' AND state IN ('collect_fee', 'fee_collected')
     AND transfer_decision IS DISTINCT FROM 'send'
  RETURNING id`;

// ...and, on the atomic path, any item of a mined settle transaction that failed (its tx_hash is recorded):
// either way our gas was spent on the payment, and a payment released by it backs off before trying again
const FEE_REVERTS_OF_PAYMENT = `
  SELECT count(*)::int AS reverts, max(updated_at) AS last_at FROM settlements
   WHERE chain_id = $1 AND nonce_space = $2 AND payer = $3 AND nonce = $4 AND state = 'failed'
     AND ((error_code = 'fee_collection_failed' AND fee_tx_hash IS NOT NULL)
          OR (settlement_mode = 'atomic' AND error_details ? 'tx_hash'))`;

/** The request side: settle requests start a settlement, find a payment's, and wait for its outcome (the API). */
export class SettlementRequestStore extends SettlementTable {
  /**
   * The settlement that owns this payment: the live one if there is one, else a new one. The unique
   * payment key makes this safe under any concurrency: exactly one insert wins, the rest read it.
   */
  async createOrGetForPayment(data: NewSettlementRow): Promise<{ settlement: SettlementRow; created: boolean }> {
    const values = [
      data.id, data.verificationId, data.paymentKey, data.surface, data.chainId, data.tokenAddress, data.payer, data.merchant,
      data.amount, data.nonce, data.feeAmount, data.metadata == null ? null : JSON.stringify(data.metadata), data.authorizationFingerprint,
      data.mechanism, data.scheme, data.nonceSpace, data.payload == null ? null : JSON.stringify(data.payload), data.network,
    ];
    // An insert that lost to one committed after this statement began sees neither its own row nor the
    // winner's: it finds nothing, and the next attempt reads the winner.
    for (let attempt = 0; attempt < 3; attempt++) {
      const rows = await runQuery(this.pool, { name: 'settlement_create_or_get', text: CREATE_OR_GET, values });
      if (rows.length > 0) return { settlement: settlementFromColumns(rows[0]), created: rows[0].created === true };
    }
    throw new Error(`could not create or find the settlement of payment ${data.paymentKey}`);
  }

  /** The settlement that owns this payment key now, if any (the live one: a released one has no key). */
  async findLiveForPayment(paymentKey: string): Promise<SettlementRow | null> {
    const rows = await runQuery(this.pool, { name: 'settlement_live_for_payment', text: 'SELECT * FROM settlements WHERE payment_key = $1', values: [paymentKey] });
    return rows.length > 0 ? settlementFromColumns(rows[0]) : null;
  }

  /** A settlement of ours that used (or is using) this payment's nonce, if any. */
  findNonceUse({ chainId, nonceSpace, payer, nonce }: PaymentNonce): Promise<SettlementRow | null> {
    return this.prisma.settlement.findFirst({
      where: {
        chainId,
        nonceSpace,
        payer,
        nonce,
        OR: [{ state: { in: [...NONCE_CONSUMING_STATES] } }, { merchantPaid: true }],
      },
    });
  }

  /** The rows of these settlements, in one query (the API's shared settle waiter reads all it waits for). */
  async findByIds(ids: string[]): Promise<SettlementRow[]> {
    const rows = await runQuery(this.pool, { name: 'settlements_by_ids', text: 'SELECT * FROM settlements WHERE id = ANY($1::text[])', values: [ids] });
    return rows.map(settlementFromColumns);
  }

  /**
   * A settle request that must answer now, for a sequential settlement whose fee the worker claimed but whose
   * transfer it has not committed to: true when the transfer is withheld (never sent; the request may answer
   * failed), false when the worker committed first (its transfer is being signed) or it is not in such a state.
   */
  async withholdTransfer(id: string): Promise<boolean> {
    return (await runQuery(this.pool, { name: 'settlements_withhold_transfer', text: WITHHOLD_TRANSFER, values: [id] })).length === 1;
  }

  /**
   * Settlements charged no fee (upto amounts below the fee) created since `since`: the merchant's, and all of
   * them, by the partial index on fee-free rows (migration 20261125200000).
   */
  async feeFreeSince(merchant: string, since: Date): Promise<{ merchant: number; all: number }> {
    const [row] = await runQuery(this.pool, {
      name: 'settlements_fee_free_since',
      // one that failed before anything was sent cost no gas: it is not counted (nor can a stranger spend the
      // budget with payments it makes fail before they are sent)
      text: `SELECT count(*) FILTER (WHERE merchant = $1)::int AS merchant, count(*)::int AS all FROM settlements
              WHERE fee_amount = '0' AND created_at >= $2 AND (state <> 'failed' OR settlement_tx_hash IS NOT NULL)`,
      values: [merchant, since],
    });
    return { merchant: row.merchant as number, all: row.all as number };
  }

  /** Fee transfers sent for earlier settlements of this payment that reverted. */
  async feeRevertsOfPayment({ chainId, nonceSpace, payer, nonce }: PaymentNonce): Promise<FeeReverts> {
    const [row] = await runQuery(this.pool, {
      name: 'fee_reverts_of_payment',
      text: FEE_REVERTS_OF_PAYMENT,
      values: [chainId, nonceSpace, payer, nonce],
    });
    return { count: row.reverts as number, lastAt: row.last_at == null ? null : new Date(row.last_at as string) };
  }
}
