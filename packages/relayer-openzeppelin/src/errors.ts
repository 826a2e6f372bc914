import { TransactionSendingError } from '@facilitator/evm-sending';
import type { RelayerTransactionStatus } from './api/relayer-api-types';

/**
 * The relayer could not be reached, answered 5xx or 429, or took too long. Retryable: everything sent is
 * stored, and the next `submit` or `waitForOutcome` finds out what the relayer did with it.
 */
export class RelayerUnavailableError extends TransactionSendingError {
  readonly retryable = true;

  constructor(
    message: string,
    /** the HTTP status, when the relayer answered */
    readonly status: number | undefined,
    /**
     * a request that may have been received and acted on (a timeout, a dropped connection, a 5xx): a send of
     * ours may exist on the relayer without us knowing its id, and is looked for before sending again
     */
    readonly maybeReceived: boolean,
    options?: { cause?: unknown },
  ) {
    super(`OpenZeppelin Relayer unavailable: ${message}`, options);
  }
}

/**
 * The relayer refused the request (400 validation, 401 bad API key, 403, 404 unknown relayer or transaction):
 * it created nothing. Not retryable as is: the configuration or the request must change.
 */
export class RelayerRequestRefusedError extends TransactionSendingError {
  readonly retryable = false;

  constructor(
    readonly status: number,
    readonly relayerMessage: string,
  ) {
    super(`OpenZeppelin Relayer refused the request (HTTP ${status}): ${relayerMessage}`);
  }
}

/**
 * The relayer ended the transaction without any version of it being mined (`failed`, `expired` or
 * `canceled`), as far as the chain shows. Not retryable: the relayer will not try it again.
 *
 * `nothingMined` is true only when nothing of it can ever be mined: the relayer gave it up before signing it
 * (no nonce, no hash), or its nonce was taken by the relayer's own replacement (a no-op), read from our
 * node. Then the settlement engine may treat the transaction as never sent. When false, a signed version may
 * still sit in a pool: its money state is open and needs an operator.
 */
export class RelayerTransactionFailedError extends TransactionSendingError {
  readonly retryable = false;

  constructor(
    readonly transactionId: string,
    readonly relayerTransactionId: string | null,
    readonly relayerStatus: RelayerTransactionStatus | string,
    readonly reason: string | null,
    readonly nothingMined: boolean,
  ) {
    super(
      `relayer ${relayerStatus} transaction ${transactionId}${relayerTransactionId ? ` (relayer id ${relayerTransactionId})` : ''}` +
        `${reason ? `: ${reason}` : ''}; ${nothingMined ? 'nothing of it was or can be mined' : 'a signed version may still be mined'}`,
    );
  }
}
