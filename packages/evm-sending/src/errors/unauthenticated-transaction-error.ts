import { TransactionSendingError } from './transaction-sending-error';

/**
 * A stored transaction row is not what our key authenticated (its authenticator, or its signed version, does
 * not check out): a row a database writer inserted or rewrote. Nothing is signed for it; not retried by itself.
 */
export class UnauthenticatedTransactionError extends TransactionSendingError {
  readonly retryable = false;

  constructor(readonly transactionId: string) {
    super(`stored transaction ${transactionId} refused: it is not what our key stored, nothing signed`);
  }
}
