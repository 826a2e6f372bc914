import type { ChainTransactionRepository, SettlementRepository, SettlementState } from '@facilitator/db';
import type { SettlementProgress } from './settlement-waiter';

// before collect_fee nothing of a settlement can have been sent, and a final one carries its own hash
const MAY_HAVE_SENT: ReadonlySet<SettlementState> = new Set(['collect_fee', 'fee_collected', 'executing']);

export interface SettlementProgressSources {
  settlements: Pick<SettlementRepository, 'findByIds'>;
  transactions: Pick<ChainTransactionRepository, 'paymentTransactionHashes'>;
}

/**
 * Reads settlements with the hash of the transaction that pays their merchants: one query for the rows,
 * and one more only for those that may have sent something (in collect_fee or later, not final).
 */
export function settlementProgressReader(sources: SettlementProgressSources): (ids: string[]) => Promise<SettlementProgress[]> {
  return async (ids) => {
    const rows = await sources.settlements.findByIds(ids);
    const sending = rows.filter((r) => MAY_HAVE_SENT.has(r.state)).map((r) => r.id);
    const hashes = await sources.transactions.paymentTransactionHashes(sending);
    return rows.map((settlement) => ({ settlement, transactionHash: settlement.settlementTxHash ?? hashes.get(settlement.id) ?? null }));
  };
}
