/**
 * Base of every error the transaction provider throws on purpose. `retryable` tells the caller's job
 * whether running again later can succeed: the provider's state in Postgres is consistent either way.
 */
export abstract class TransactionSendingError extends Error {
  abstract readonly retryable: boolean;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}
