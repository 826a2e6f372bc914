import type { ChainTransactionRepository, Settlement, SettlementRequestStore, SettlementState } from '@facilitator/db';
import { paidElsewhereConfirming } from '@facilitator/settlement';
import type { SettlementProgress } from './settlement-waiter';

// the states in which the payment's own transaction (its batch's settle, or its transfer) may exist; before them
// only a wallet deployment can, which a pending answer never names, and a final one carries its own hash
const MAY_HAVE_SENT: ReadonlySet<SettlementState> = new Set(['collect_fee', 'fee_collected', 'executing']);

export interface SettlementProgressSources {
  settlements: Pick<SettlementRequestStore, 'findByIds'>;
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
    return rows.map((settlement) => ({ settlement, transactionHash: settlement.settlementTxHash ?? hashes.get(settlement.id) ?? executingElsewhere(settlement) ?? null }));
  };
}

/**
 * Someone else's transaction that moved the payer's money to the merchant, while the settlement waits for its
 * confirmations (execution_confirming): the payment's own transaction now, which a pending answer may name.
 */
function executingElsewhere(settlement: Settlement): string | undefined {
  if (!paidElsewhereConfirming(settlement)) return undefined;
  const hash = (settlement.waitingDetail as { tx_hash?: unknown } | null)?.tx_hash;
  return typeof hash === 'string' ? hash : undefined;
}
