import {
  isSolanaError,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE,
  SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE,
  SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED,
  SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND,
  SOLANA_ERROR__JSON_RPC__INVALID_PARAMS,
} from '@solana/kit';

/**
 * Why a node refused a transaction without taking it: nothing was charged and nothing will land from this send.
 * - `blockhash_not_found`: its blockhash expired (or is unknown): it can never land, rebuild or give up;
 * - `simulation_failed`: the preflight simulation failed (`transactionError` is the node's reason, `logs` the program logs);
 * - `signature_failure`: a signature is missing or does not verify;
 * - `invalid`: the node could not read it (too large, malformed).
 */
export type SvmSendRefusalKind = 'blockhash_not_found' | 'simulation_failed' | 'signature_failure' | 'invalid';

export class SvmSendRefused extends Error {
  constructor(
    readonly kind: SvmSendRefusalKind,
    message: string,
    readonly logs: readonly string[] = [],
    /** kit's error for the transaction error the preflight reported, when there is one */
    readonly transactionError?: Error,
  ) {
    super(message);
    this.name = 'SvmSendRefused';
  }
}

/**
 * What a send's error means: 'already_processed' (the same transaction landed before: a resend after a crash is
 * a success), a SvmSendRefused, or undefined when it is not a refusal (the node did not answer, or answered
 * something else): then the transaction may or may not have reached the cluster, and only its outcome can say.
 */
export function sendRefusalOf(error: unknown): SvmSendRefused | 'already_processed' | undefined {
  if (isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_SEND_TRANSACTION_PREFLIGHT_FAILURE)) {
    const cause = error.cause;
    const logs = (error.context.logs ?? []) as readonly string[];
    if (isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__ALREADY_PROCESSED)) return 'already_processed';
    if (isSolanaError(cause, SOLANA_ERROR__TRANSACTION_ERROR__BLOCKHASH_NOT_FOUND)) {
      return new SvmSendRefused('blockhash_not_found', 'the transaction\'s blockhash is not valid any more', logs, cause);
    }
    const reason = cause instanceof Error ? cause.message : 'no reason given';
    return new SvmSendRefused('simulation_failed', `the preflight simulation failed: ${reason}`, logs, cause instanceof Error ? cause : undefined);
  }
  if (isSolanaError(error, SOLANA_ERROR__JSON_RPC__SERVER_ERROR_TRANSACTION_SIGNATURE_VERIFICATION_FAILURE)) {
    return new SvmSendRefused('signature_failure', 'a signature is missing or does not verify');
  }
  if (isSolanaError(error, SOLANA_ERROR__JSON_RPC__INVALID_PARAMS)) {
    return new SvmSendRefused('invalid', `the node could not read the transaction: ${error.message}`);
  }
  return undefined;
}
