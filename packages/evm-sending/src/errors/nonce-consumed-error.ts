import { TransactionSendingError } from './transaction-sending-error';

/**
 * The transaction's nonce was used on chain by a transaction that is none of ours (someone else sent from
 * the key): ours can never be mined. Not retried automatically, because signing again with a new nonce
 * would break the rule that one idempotency key never gets two nonces; the caller decides what to do.
 */
export class NonceConsumedError extends TransactionSendingError {
  readonly retryable = false;

  constructor(
    readonly transactionId: string,
    readonly from: string,
    readonly nonce: bigint,
  ) {
    super(`nonce ${nonce} of ${from} was used by a transaction that is not ours; transaction ${transactionId} can never be mined`);
  }
}
