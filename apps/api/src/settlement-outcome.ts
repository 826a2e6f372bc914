import {
  ErrorCode,
  FacilitatorError,
  FeeCollectionFailedError,
  InsufficientAllowanceError,
  SettlementFailedError,
} from '@facilitator/core';
import type { Settlement, SettlementRepository } from '@facilitator/db';
import { isFinal } from '@facilitator/settlement';

/** The typed error a failed settlement answers with, carrying its stored code, message and details. */
export function settlementError(s: Settlement): FacilitatorError {
  const details = { ...((s.errorDetails as Record<string, unknown> | null) ?? {}), settlement_id: s.id };
  const message = s.errorMessage ?? 'settlement failed';
  switch (s.errorCode) {
    case ErrorCode.InsufficientAllowance:
      return new InsufficientAllowanceError(message, details);
    case ErrorCode.FeeCollectionFailed:
      return new FeeCollectionFailedError(message, details);
    default:
      return new SettlementFailedError(message, details);
  }
}

/**
 * Waits for a settlement to become final, reading Postgres (the source of truth) with a short backoff.
 * Returns the last row read, final or not, when the wait is over.
 */
export async function waitForFinal(settlements: SettlementRepository, initial: Settlement, timeoutMs: number): Promise<Settlement> {
  const deadline = Date.now() + timeoutMs;
  let current = initial;
  let delay = 25;
  while (!isFinal(current.state) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, Math.min(delay, Math.max(0, deadline - Date.now()))));
    delay = Math.min(delay * 2, 200);
    current = (await settlements.findById(current.id)) ?? current;
  }
  return current;
}
