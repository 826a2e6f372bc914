import { TransactionSendingError } from '@facilitator/evm-sending';
import { unavailableDependencyOf } from '@facilitator/core';

/**
 * Whether a step's error can go away by itself. Transient: a dependency down (RPC, database, Redis,
 * network) or a transaction error that says so (`retryable`); the job retries with back-off, a bounded
 * number of times. Permanent: everything else (a bug, a broken invariant, a conflict) — running the same
 * step again would fail the same way, so the settlement ends or waits for an operator at once.
 */
export type ErrorClass = 'transient' | 'permanent';

export function classifySettlementError(err: unknown): ErrorClass {
  if (err instanceof TransactionSendingError) return err.retryable ? 'transient' : 'permanent';
  if (unavailableDependencyOf(err, false)) return 'transient';
  const code = (err as { code?: unknown } | null)?.code;
  // ethers' own codes for a node that did not answer usefully
  if (code === 'NETWORK_ERROR' || code === 'TIMEOUT' || code === 'SERVER_ERROR' || code === 'UNKNOWN_ERROR') return 'transient';
  return 'permanent';
}
