import { TransactionSendingError } from './transaction-sending-error';

/** The simulation (`eth_estimateGas` from the sending key) reverted: nothing was allocated, stored or sent. */
export class TransactionWouldRevertError extends TransactionSendingError {
  readonly retryable = false;

  constructor(
    /** the decoded revert reason, e.g. "ERC20: transfer amount exceeds balance"; "execution reverted" when the contract gave none */
    readonly reason: string,
    /** the raw revert data, 0x hex, when the node returned it */
    readonly revertData: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(`transaction would revert: ${reason}`, options);
  }
}
