import type { ChainTransactionRepository, SettlementRepository, SettlementState } from '@facilitator/db';
import type { SettlementProgress } from './settlement-waiter';

// the states in which the payment's own transaction (its batch's settle, or its transfer) may exist; before them
// only a wallet deployment can, which a pending answer never names, and a final one carries its own hash
const MAY_HAVE_SENT: ReadonlySet<SettlementState> = new Set(['collect_fee', 'fee_collected', 'executing']);

export interface SettlementProgressSources {
  settlements: Pick<SettlementRepository, 'findByIds'>;
  transactions: Pick<ChainTransactionRepository, 'paymentTransactionHashes'>;
}

/**
 * Reads settlements with the hash of the transaction that moves their payer's money, once it is signed (the
 * transfer, or the batch's settle; never the sequential fee or a wallet deployment): one query for the rows,
 * and one more only for those that may have sent it.
 */
export function settlementProgressReader(sources: SettlementProgressSources): (ids: string[]) => Promise<SettlementProgress[]> {
  return async (ids) => {
    const rows = await sources.settlements.findByIds(ids);
    const sending = rows.filter((r) => MAY_HAVE_SENT.has(r.state)).map((r) => r.id);
    const hashes = await sources.transactions.paymentTransactionHashes(sending);
    return rows.map((settlement) => ({ settlement, transactionHash: settlement.settlementTxHash ?? hashes.get(settlement.id) ?? null }));
  };
}
