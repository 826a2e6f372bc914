import type { SvmSignatureStatus } from './svm-reads';
import type { SvmTransactionError } from './transaction-error';

/**
 * Where a sent transaction stands, read once:
 * - 'pending': not landed yet (or landed only at `processed`, which a fork can undo) and it still can;
 * - 'confirmed' / 'finalized': landed and succeeded, at that commitment;
 * - { failed }: landed (its fee paid) and failed, at `confirmed` or `finalized`: final in effect, the payment
 *   did not move; a resend cannot help, the same signature is already processed;
 * - 'expired': its blockhash can no longer land and no block holds it: it never will (the dropped case).
 */
export type SvmTransactionOutcome = 'pending' | 'confirmed' | 'finalized' | 'expired' | { readonly failed: SvmTransactionError; readonly finalized: boolean };

/** How a transaction's lifetime is known: the blockhash's last valid block height (best), or the blockhash itself. */
export type SvmLifetime = { readonly lastValidBlockHeight: bigint } | { readonly blockhash: string };

/**
 * The outcome from one status read. `expired` says whether the lifetime had already ended when the status was
 * read: it must be established before the status is (a transaction cannot land after its lifetime ends, so an
 * unknown signature read after that can never become known; read the other way round it could have landed in
 * between).
 */
export function outcomeOf(status: SvmSignatureStatus | undefined, expired: boolean): SvmTransactionOutcome {
  if (!status) return expired ? 'expired' : 'pending';
  const level = status.confirmationStatus;
  if (level !== 'confirmed' && level !== 'finalized') {
    // processed: in a block a fork may still drop; once the lifetime is over, the fork that holds it is the one that counts
    return 'pending';
  }
  if (status.err !== null) return { failed: status.err, finalized: level === 'finalized' };
  return level;
}
