import { TransactionSendingError } from './transaction-sending-error';

/** No version of the transaction was mined in time. It stays in flight; waiting again later resumes the watch. */
export class OutcomeTimeoutError extends TransactionSendingError {
  readonly retryable = true;

  constructor(
    readonly transactionId: string,
    readonly waitedMs: number,
  ) {
    super(`transaction ${transactionId} was not mined within ${waitedMs} ms`);
  }
}
