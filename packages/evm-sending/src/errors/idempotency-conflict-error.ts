import { TransactionSendingError } from './transaction-sending-error';

/**
 * `submit` was called again for a (settlementId, purpose) with a different chain, target or calldata than
 * the transaction already stored for it: a caller bug, since the stored one is what will be mined.
 */
export class IdempotencyConflictError extends TransactionSendingError {
  readonly retryable = false;

  constructor(
    readonly settlementId: string,
    readonly purpose: string,
    readonly field: 'chainId' | 'to' | 'data' | 'gasLimit',
  ) {
    super(`settlement ${settlementId} already has a ${purpose} transaction with a different ${field}`);
  }
}
