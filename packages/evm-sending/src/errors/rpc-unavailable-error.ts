import { TransactionSendingError } from './transaction-sending-error';

/** The node could not be reached or answered with a transient failure (timeout, refused connection, 5xx, 429). */
export class RpcUnavailableError extends TransactionSendingError {
  readonly retryable = true;

  constructor(
    readonly chainId: number,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`RPC of chain ${chainId} unavailable: ${message}`, options);
  }
}
