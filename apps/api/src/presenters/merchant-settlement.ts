import type { Settlement } from '@facilitator/db';

/** A settlement as its merchant sees it on the merchant page and in its CSV export. */
export function merchantSettlementRecord(settlement: Settlement) {
  return {
    id: settlement.id,
    created_at: settlement.createdAt.toISOString(),
    network: `eip155:${settlement.chainId}`,
    payer: settlement.payer,
    amount: settlement.amount,
    fee: settlement.feeAmount,
    fee_collected: settlement.feeCollectedAt !== null,
    state: settlement.state,
    settlement_tx_hash: settlement.settlementTxHash,
    fee_tx_hash: settlement.feeTxHash,
  };
}

export type MerchantSettlementRecord = ReturnType<typeof merchantSettlementRecord>;

/** The CSV export's columns, in order: the record's own fields. */
export const MERCHANT_SETTLEMENT_COLUMNS: ReadonlyArray<keyof MerchantSettlementRecord> = [
  'id', 'created_at', 'network', 'payer', 'amount', 'fee', 'fee_collected', 'state', 'settlement_tx_hash', 'fee_tx_hash',
];
