import type { TransactionOutcome } from '@facilitator/evm-sending';
import type { StoredSettlementBatch } from '@facilitator/db';
import type { ExecutorItem } from '@facilitator/evm-executor';
import type { PendingOutcome } from '../outcome-waits';

/** A settlement's payment as one item of the executor's `settle`. */
export interface AtomicItemRequest {
  settlementId: string;
  chainId: number;
  item: ExecutorItem;
  /** the payer has code (a contract wallet): its item is sent in a transaction of its own */
  alone?: boolean;
}

/**
 * The atomic path's chain access, as the steps see it: settlements are placed in batches (stored before
 * anything is sent) and each batch is one `settle` transaction of the treasury's delegated executor.
 */
export interface AtomicSettlement {
  /** the batch the settlement was placed in by an earlier run, if any */
  batchOf(settlementId: string): Promise<StoredSettlementBatch | null>;
  /** places the item in a batch with whatever else is ready now, stores it, and sends it */
  place(request: AtomicItemRequest): Promise<StoredSettlementBatch>;
  /**
   * sends the batch's transaction if no run has yet (idempotent), then gives its outcome, or pending when the
   * outcome is not known within the in-slot wait (see OutcomeWaits)
   */
  outcome(batch: StoredSettlementBatch, confirmations: number): Promise<TransactionOutcome | PendingOutcome>;
}
