import type { ChainTransactionRepository, SettlementRepository, SettlementState } from '@facilitator/db';
import type { SettlementProgress } from './settlement-waiter';

// in pending and check_allowance nothing of a settlement can have been sent, and a final one carries its own hash
const MAY_HAVE_SENT: ReadonlySet<SettlementState> = new Set(['deploying_wallet', 'collect_fee', 'fee_collected', 'executing']);

export interface SettlementProgressSources {
  settlements: Pick<SettlementRepository, 'findByIds'>;
  transactions: Pick<ChainTransactionRepository, 'paymentTransactionHashes'>;
}

/**
 * Reads settlements with the hash of their newest transaction on its way (the one that pays their merchants
 * once there is one): one query for the rows, and one more only for those that may have sent something.
 */
export function settlementProgressReader(sources: SettlementProgressSources): (ids: string[]) => Promise<SettlementProgress[]> {
  return async (ids) => {
    const rows = await sources.settlements.findByIds(ids);
    const sending = rows.filter((r) => MAY_HAVE_SENT.has(r.state)).map((r) => r.id);
    const hashes = await sources.transactions.paymentTransactionHashes(sending);
    return rows.map((settlement) => ({ settlement, transactionHash: settlement.settlementTxHash ?? hashes.get(settlement.id) ?? null }));
  };
}
