import { TransactionSendingError } from './transaction-sending-error';

/**
 * The transaction would need more gas than its kind may spend (GAS_CAP_*): refused before anything is
 * allocated or signed, so a payer contract that burns gas in its signature check costs us nothing.
 */
export class GasCapExceededError extends TransactionSendingError {
  readonly retryable = false;

  constructor(
    readonly estimate: bigint,
    readonly cap: bigint,
  ) {
    super(`transaction would need ${estimate} gas, above its cap of ${cap}`);
  }
}
