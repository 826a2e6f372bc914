import type { NodeErrorCategory } from '@facilitator/evm-chain';
import { TransactionSendingError } from './transaction-sending-error';

/**
 * The node refused our signed transaction for a reason other than the ones handled in place (see
 * NODE_ERROR_RULES): e.g. the key lacks ETH (`insufficient_funds`, retryable once funded) or the
 * transaction is malformed (`invalid_transaction`, not retryable). The signed attempt stays stored.
 */
export class TransactionRejectedError extends TransactionSendingError {
  constructor(
    readonly category: NodeErrorCategory,
    readonly retryable: boolean,
    /** undefined when the node refused the simulation, before anything was stored */
    readonly transactionId: string | undefined,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`${transactionId ? `transaction ${transactionId}` : 'simulation'} rejected by the node (${category}): ${message}`, options);
  }
}
