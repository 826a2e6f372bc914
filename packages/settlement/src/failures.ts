import { ErrorCode } from '@facilitator/core';
import type { StepResult } from './step-outcome';

export interface Failure {
  code: string;
  message: string;
  details: Record<string, unknown>;
}

/** A final failure. `paymentReleased`: no fee was taken, so a later settle may try this payment again. */
export function failed(failure: Failure, paymentReleased: boolean, extra: StepResult['data'] = {}): StepResult {
  return {
    to: 'failed',
    data: {
      ...extra,
      errorCode: failure.code,
      errorMessage: failure.message,
      errorDetails: failure.details as object,
      ...(paymentReleased ? { paymentKey: null } : {}),
    },
    note: { error: failure.code, reason: failure.details.reason },
  };
}

const NOTHING_CHARGED = 'no fee was collected and the payer was not charged';

export function insufficientAllowance(args: {
  required: bigint;
  available: bigint;
  merchant: string;
  treasury: string;
  approvalCommand: string;
  approvalCommandCast: string;
  /** fees of other settlements already reserved against the same allowance */
  inFlight?: bigint;
}): Failure {
  return {
    code: ErrorCode.InsufficientAllowance,
    message: 'merchant allowance to the treasury is below the settlement fee',
    details: {
      required: args.required.toString(),
      available: args.available.toString(),
      merchant: args.merchant,
      treasury: args.treasury,
      approval_command: args.approvalCommand,
      approval_command_cast: args.approvalCommandCast,
      ...(args.inFlight ? { fees_in_flight: args.inFlight.toString() } : {}),
      timing: 'checked before any transfer',
      impact: `the payment was not settled; ${NOTHING_CHARGED}`,
    },
  };
}

export function feeCollectionFailed(reason: string, merchantBalance: bigint, requiredFee: bigint, inFlight = 0n): Failure {
  return {
    code: ErrorCode.FeeCollectionFailed,
    message: 'the settlement fee could not be collected from the merchant',
    details: {
      reason,
      merchant_balance: merchantBalance.toString(),
      required_fee: requiredFee.toString(),
      ...(inFlight ? { fees_in_flight: inFlight.toString() } : {}),
      timing: 'before the payment transfer',
      impact: `the payment was not settled; ${NOTHING_CHARGED}`,
    },
  };
}

/** The merchant's fee transfers kept reverting: its settlements pause instead of burning gas in a loop. */
export function merchantPaused(until: Date, reverts: number): Failure {
  return {
    code: ErrorCode.FeeCollectionFailed,
    message: 'settlements for this merchant are paused: its fee transfers keep reverting',
    details: {
      reason: 'merchant paused after repeated fee transfer reverts',
      paused_until: until.toISOString(),
      reverts_before_pause: reverts,
      timing: 'before any transfer',
      impact: `the payment was not settled; ${NOTHING_CHARGED}; settle again after paused_until`,
    },
  };
}

/** The transfer cannot succeed, found before the fee was taken: nobody pays anything. */
export function settlementDoomed(reason: string, extra: Record<string, unknown> = {}): Failure {
  return {
    code: ErrorCode.SettlementFailed,
    message: `settlement failed: ${reason}`,
    details: {
      reason,
      ...extra,
      fee_status: 'not_collected',
      merchant_charged: false,
      customer_charged: false,
      note: `checked before collecting the fee; ${NOTHING_CHARGED}`,
    },
  };
}

/** The transfer failed after the fee was taken: the fee stays collected (the merchant paid for the attempt). */
export function settlementFailedAfterFee(args: {
  reason: string;
  feeAmount: bigint;
  feeTxHash: string;
  settlementError: string;
  customerCharged: boolean;
  extra?: Record<string, unknown>;
}): Failure {
  return {
    code: ErrorCode.SettlementFailed,
    message: `settlement failed: ${args.reason}`,
    details: {
      reason: args.reason,
      ...args.extra,
      fee_status: 'collected',
      fee_amount: args.feeAmount.toString(),
      fee_tx_hash: args.feeTxHash,
      settlement_error: args.settlementError,
      merchant_charged: true,
      customer_charged: args.customerCharged,
      note: 'the fee was collected before the transfer was attempted and is kept; the payer was not charged',
    },
  };
}

/**
 * Atomic path: the transfer failed inside the one transaction that also took the fee, so the fee was
 * undone with it. Stricter than the spec's "the fee is kept" (docs/decisions.md, "Atomic settlement").
 */
export function transferFailedFeeReturned(reason: string, txHash: string): Failure {
  return {
    code: ErrorCode.SettlementFailed,
    message: `settlement failed: ${reason}`,
    details: {
      reason,
      settlement_error: reason,
      tx_hash: txHash,
      fee_status: 'not_collected',
      merchant_charged: false,
      customer_charged: false,
      note: 'the fee and the transfer were one transaction: the transfer failed, so the fee was not collected either',
    },
  };
}

/**
 * Failure accounting (docs/decisions.md): the payer's payments failed on chain too often lately, or the
 * merchant's payments from payers that never paid it did; refused before anything is sent.
 */
export function failurePaused(pause: { who: 'payer' | 'merchant'; until: Date; failures: number }): Failure {
  const reason =
    pause.who === 'payer'
      ? 'payer paused after repeated failures on chain'
      : 'merchant paused for new payers after repeated failures on chain';
  return {
    code: ErrorCode.SettlementFailed,
    message: `settlement failed: ${reason}`,
    details: {
      reason,
      paused: pause.who,
      paused_until: pause.until.toISOString(),
      failures_before_pause: pause.failures,
      fee_status: 'not_collected',
      merchant_charged: false,
      customer_charged: false,
      note: `checked before any transfer; ${NOTHING_CHARGED}; settle again after paused_until`,
    },
  };
}
