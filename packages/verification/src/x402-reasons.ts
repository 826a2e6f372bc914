import { ErrorCode } from '@facilitator/core';
import { mechanismById, registeredMechanisms, type PaymentMechanism } from '@facilitator/payment-mechanisms';
import { FailureReason, type VerificationFailure } from './failure-reasons';

/**
 * The generic `invalidReason` / `errorReason` codes the x402 facilitator endpoints answer with. Three
 * sources, in order of preference (docs/decisions.md, "x402 compatibility", has the full table):
 * - the x402 specification's own list (specs/x402-specification-v2.md §9, also `x402/types` ErrorReasons);
 * - where the specification has none, the code the reference facilitator (`@x402/evm`'s exact EVM
 *   scheme) uses for the same condition, so tooling written against it understands ours;
 * - codes of ours, for conditions only a fee-charging facilitator has.
 * A mechanism whose payments the reference answers in codes of their own says them itself
 * (`PaymentMechanism.x402.reasons`); this file names none.
 */
export const X402Reason = {
  // the x402 specification
  InsufficientFunds: 'insufficient_funds',
  AuthorizationValidAfter: 'invalid_exact_evm_payload_authorization_valid_after',
  AuthorizationValidBefore: 'invalid_exact_evm_payload_authorization_valid_before',
  AuthorizationValue: 'invalid_exact_evm_payload_authorization_value',
  Signature: 'invalid_exact_evm_payload_signature',
  RecipientMismatch: 'invalid_exact_evm_payload_recipient_mismatch',
  InvalidNetwork: 'invalid_network',
  InvalidPayload: 'invalid_payload',
  InvalidPaymentRequirements: 'invalid_payment_requirements',
  InvalidScheme: 'invalid_scheme',
  UnsupportedScheme: 'unsupported_scheme',
  InvalidX402Version: 'invalid_x402_version',
  InvalidTransactionState: 'invalid_transaction_state',
  UnexpectedVerifyError: 'unexpected_verify_error',
  UnexpectedSettleError: 'unexpected_settle_error',
  // the reference implementation (@x402/evm exact facilitator), for conditions the specification does not list
  NonceAlreadyUsed: 'invalid_exact_evm_nonce_already_used',
  TokenNameMismatch: 'invalid_exact_evm_token_name_mismatch',
  TokenVersionMismatch: 'invalid_exact_evm_token_version_mismatch',
  SettlementPending: 'settlement_pending',
  // ours: the flat fee the merchant pays per settlement
  InsufficientFeeAllowance: 'insufficient_fee_allowance',
  FeeCollectionFailed: 'fee_collection_failed',
  // ours: the payment-identifier extension's "same id, different payment" (its 409), as an x402 answer
  PaymentIdentifierConflict: 'payment_identifier_conflict',
} as const;

export type X402Reason = (typeof X402Reason)[keyof typeof X402Reason];

/** A payment whose requirements claim another EIP-712 domain than the token's pinned one (x402 surface only). */
export interface DomainFailure {
  reason: 'eip712_name_mismatch' | 'eip712_version_mismatch';
  message: string;
  details: Record<string, unknown>;
}

export type X402VerificationFailure = VerificationFailure | DomainFailure;

/**
 * The generic code of each failure. An approval permit's failure and a facilitator mismatch have none: only
 * a mechanism whose payments carry one has them (its `x402.reasons`).
 */
const INVALID_REASON: Partial<Record<X402VerificationFailure['reason'], X402Reason>> = {
  [FailureReason.InvalidSignature]: X402Reason.Signature,
  [FailureReason.RecipientIsTreasury]: X402Reason.RecipientMismatch,
  [FailureReason.RecipientMismatch]: X402Reason.RecipientMismatch,
  [FailureReason.AmountMismatch]: X402Reason.AuthorizationValue,
  // the value is what is wrong (too small to settle); x402 has no code of its own for a minimum
  [FailureReason.AmountBelowMinimum]: X402Reason.AuthorizationValue,
  // the requirements name an asset this network does not settle: the requirements are what is wrong
  [FailureReason.TokenMismatch]: X402Reason.InvalidPaymentRequirements,
  [FailureReason.NotYetValid]: X402Reason.AuthorizationValidAfter,
  [FailureReason.Expired]: X402Reason.AuthorizationValidBefore,
  // too little validity left to settle: the reference facilitator uses the same code for its 6 s buffer
  [FailureReason.ExpiresTooSoon]: X402Reason.AuthorizationValidBefore,
  [FailureReason.NonceUsed]: X402Reason.NonceAlreadyUsed,
  [FailureReason.NonceHeld]: X402Reason.NonceAlreadyUsed,
  // a payment that names no spender, and whose token checks its own signature, never fails these
  [FailureReason.InvalidSpender]: X402Reason.InvalidPayload,
  [FailureReason.AllowanceRequired]: X402Reason.InsufficientFunds,
  [FailureReason.MechanismUnavailable]: X402Reason.InvalidPaymentRequirements,
  eip712_name_mismatch: X402Reason.TokenNameMismatch,
  eip712_version_mismatch: X402Reason.TokenVersionMismatch,
};

/** A failure's code in a mechanism's own codes, if it has one for it. */
function ownReasonOf(mechanism: PaymentMechanism<unknown> | undefined, failure: X402VerificationFailure): string | undefined {
  const own = mechanism?.x402?.reasons;
  if (!own) return undefined;
  if (failure.reason === FailureReason.ApprovalPermitInvalid && own.approvalPermit) {
    return own.approvalPermit.byField[String(failure.details.field)] ?? own.approvalPermit.otherwise;
  }
  return own.invalid?.[failure.reason as FailureReason];
}

/**
 * A failure of a condition only some mechanisms' payments have (an approval permit, a named facilitator),
 * where its payment's mechanism is not known or has no code for it: in the codes of the first registered
 * mechanism that has one.
 */
function anyOwnReasonOf(failure: X402VerificationFailure): string | undefined {
  for (const mechanism of registeredMechanisms()) {
    const own = ownReasonOf(mechanism, failure);
    if (own !== undefined) return own;
  }
  return undefined;
}

/**
 * The x402 `invalidReason` of a verification failure: its payment's mechanism's own code where it has one,
 * else the generic code, else (a condition the generic codes do not know) a mechanism's that has one.
 */
export function x402InvalidReasonOf(failure: X402VerificationFailure): string {
  const mechanism = 'mechanism' in failure && failure.mechanism ? (mechanismById(failure.mechanism) as PaymentMechanism<unknown> | undefined) : undefined;
  return ownReasonOf(mechanism, failure) ?? INVALID_REASON[failure.reason] ?? anyOwnReasonOf(failure) ?? X402Reason.UnexpectedVerifyError;
}

function describe(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A one-line `invalidMessage`: the engine's message and the detail that explains it. */
export function x402InvalidMessageOf(failure: X402VerificationFailure): string {
  const d = failure.details;
  switch (failure.reason) {
    case FailureReason.AmountMismatch:
      return `${failure.message}: the authorization pays ${describe(d.authorization_value)}, the requirements ask for ${describe(d.expected_amount)}`;
    case FailureReason.AmountBelowMinimum:
      return `${failure.message}: the authorization pays ${describe(d.authorization_value)}, the minimum is ${describe(d.minimum_amount)}`;
    case FailureReason.TokenMismatch:
      return `${failure.message}: ${describe(d.reason)}`;
    case FailureReason.Expired:
    case FailureReason.ExpiresTooSoon:
      return `${failure.message}: validBefore ${describe(d.validBefore)}, now ${describe(d.currentTime)}` +
        (d.minimum_validity_seconds !== undefined ? `, at least ${describe(d.minimum_validity_seconds)} s of validity are needed to settle` : '');
    case FailureReason.NotYetValid:
      return `${failure.message}: validAfter ${describe(d.validAfter)}, now ${describe(d.currentTime)}`;
    default:
      return d.reason !== undefined ? `${failure.message}: ${describe(d.reason)}` : failure.message;
  }
}

/** What a failed settlement row carries (errorCode, errorMessage, errorDetails of the settlement). */
interface FailedSettlementLike {
  errorCode: string | null;
  errorMessage: string | null;
  errorDetails: unknown;
}

/**
 * The x402 `errorReason` and `errorMessage` of a failed settlement. The fee conditions are ours; a
 * transfer that could not run is classified by the token's own revert reason where one is telling.
 */
export function x402SettleFailureOf(s: FailedSettlementLike): { errorReason: string; errorMessage: string } {
  const details = (s.errorDetails ?? {}) as Record<string, unknown>;
  const message = s.errorMessage ?? 'settlement failed';
  switch (s.errorCode) {
    case ErrorCode.InsufficientAllowance:
      return {
        errorReason: X402Reason.InsufficientFeeAllowance,
        errorMessage:
          `${message}: allowance ${describe(details.available)}, fee ${describe(details.required)}; ` +
          `the merchant ${describe(details.merchant)} must approve the treasury ${describe(details.treasury)} ` +
          `(${describe(details.approval_command)}). Nothing was charged.`,
      };
    case ErrorCode.FeeCollectionFailed:
      return {
        errorReason: X402Reason.FeeCollectionFailed,
        errorMessage: `${message}: ${describe(details.reason)} (merchant balance ${describe(details.merchant_balance)}, fee ${describe(details.required_fee)}). Nothing was charged.`,
      };
    case ErrorCode.SettlementFailed: {
      const reason = `${describe(details.reason ?? '')} ${describe(details.settlement_error ?? '')}`;
      const feeNote = details.fee_status === 'collected' ? ' The fee was collected and is kept; the payer was not charged.' : ' Nothing was charged.';
      return { errorReason: transferFailureReason(reason), errorMessage: `${message}.${feeNote}` };
    }
    default:
      return { errorReason: X402Reason.UnexpectedSettleError, errorMessage: message };
  }
}

/**
 * Lists merged keeping each one's order: an entry several lists share (the same object: Permit2's reverts,
 * listed by both of its proxies' mechanisms) comes after everything any of them lists before it; otherwise
 * the earlier list's entry first.
 */
function mergedInOrder<T>(lists: ReadonlyArray<readonly T[]>): T[] {
  const rest = lists.map((list) => [...list]);
  const merged: T[] = [];
  for (;;) {
    const heads = rest.filter((list) => list.length > 0).map((list) => list[0]);
    if (heads.length === 0) return merged;
    const next = heads.find((head) => rest.every((list) => list.indexOf(head) <= 0)) ?? heads[0];
    merged.push(next);
    for (const list of rest) {
      const at = list.indexOf(next);
      if (at >= 0) list.splice(at, 1);
    }
  }
}

/**
 * The conditions and reverts the mechanisms name themselves (`x402.reasons.settleFailures`), each
 * mechanism's in its own order: a failed settlement here does not say its mechanism, and a revert's error
 * name is its contract's.
 */
const MECHANISM_SETTLE_FAILURES = mergedInOrder(registeredMechanisms().map((m) => m.x402?.reasons?.settleFailures ?? []));

/**
 * A transfer that could not run, by its reason: a balance too low; else what a mechanism names itself;
 * else the token's own reverts (EIP-3009's, in the specification's codes).
 */
function transferFailureReason(reason: string): string {
  if (/exceeds balance|insufficient (funds|balance)|balance insufficient/i.test(reason)) return X402Reason.InsufficientFunds;
  const own = MECHANISM_SETTLE_FAILURES.find(([pattern]) => pattern.test(reason));
  if (own) return own[1];
  if (/TRANSFER_FROM_FAILED/.test(reason)) return X402Reason.InsufficientFunds;
  if (/used or cancel/i.test(reason)) return X402Reason.NonceAlreadyUsed;
  if (/expired/i.test(reason)) return X402Reason.AuthorizationValidBefore;
  if (/not yet valid/i.test(reason)) return X402Reason.AuthorizationValidAfter;
  if (/invalid signature/i.test(reason)) return X402Reason.Signature;
  return X402Reason.InvalidTransactionState;
}
