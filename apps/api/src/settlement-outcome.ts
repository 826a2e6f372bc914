import {
  ErrorCode,
  FacilitatorError,
  FeeCollectionFailedError,
  InsufficientAllowanceError,
  SettlementFailedError,
} from '@facilitator/core';
import type { Settlement } from '@facilitator/db';

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
