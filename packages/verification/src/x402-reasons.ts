import { ErrorCode } from '@facilitator/core';
import { FailureReason, type VerificationFailure } from './failure-reasons';
import { EXACT_PERMIT2, UPTO_PERMIT2, type PaymentMechanismId } from '@facilitator/payment-mechanisms';

/**
 * The `invalidReason` / `errorReason` codes the x402 facilitator endpoints answer with. Three sources,
 * in order of preference (docs/decisions.md, "x402 compatibility", has the full table):
 * - the x402 specification's own list (specs/x402-specification-v2.md §9, also `x402/types` ErrorReasons);
 * - where the specification has none, the code the reference facilitator (`@x402/evm`'s exact EVM
 *   scheme) uses for the same condition, so tooling written against it understands ours;
 * - codes of ours, for conditions only a fee-charging facilitator has.
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
  // ...and its Permit2 codes, for `exact` through Permit2
  Permit2Signature: 'invalid_permit2_signature',
  Permit2RecipientMismatch: 'invalid_permit2_recipient_mismatch',
  Permit2Spender: 'invalid_permit2_spender',
  Permit2AmountMismatch: 'permit2_amount_mismatch',
  Permit2InvalidAmount: 'permit2_invalid_amount',
  Permit2TokenMismatch: 'permit2_token_mismatch',
  Permit2NotYetValid: 'permit2_not_yet_valid',
  Permit2DeadlineExpired: 'permit2_deadline_expired',
  Permit2InvalidNonce: 'permit2_invalid_nonce',
  Permit2AllowanceRequired: 'permit2_allowance_required',
  Permit2ProxyNotDeployed: 'permit2_proxy_not_deployed',
  // ...and its eip2612GasSponsoring codes (the payer's EIP-2612 permit for Permit2)
  Eip2612FromMismatch: 'eip2612_from_mismatch',
  Eip2612AssetMismatch: 'eip2612_asset_mismatch',
  Eip2612SpenderNotPermit2: 'eip2612_spender_not_permit2',
  Eip2612DeadlineExpired: 'eip2612_deadline_expired',
  Permit2612AmountMismatch: 'permit2_2612_amount_mismatch',
  InvalidEip2612ExtensionFormat: 'invalid_eip2612_extension_format',
  // ...and its upto codes (`@x402/evm`'s upto facilitator)
  UptoFacilitatorMismatch: 'upto_facilitator_mismatch',
  UptoSettlementExceedsAmount: 'invalid_upto_evm_payload_settlement_exceeds_amount',
  UptoAmountExceedsPermitted: 'upto_amount_exceeds_permitted',
  UptoUnauthorizedFacilitator: 'upto_unauthorized_facilitator',
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

const INVALID_REASON: Record<X402VerificationFailure['reason'], X402Reason> = {
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
  // neither can happen to an EIP-3009 payment (it names no spender, and the token checks its own signature)
  [FailureReason.InvalidSpender]: X402Reason.InvalidPayload,
  [FailureReason.AllowanceRequired]: X402Reason.InsufficientFunds,
  [FailureReason.MechanismUnavailable]: X402Reason.InvalidPaymentRequirements,
  // only a Permit2 payment carries one; answered by the field at fault (APPROVAL_PERMIT_REASON)
  [FailureReason.ApprovalPermitInvalid]: X402Reason.InvalidEip2612ExtensionFormat,
  // only an upto payment names its facilitator
  [FailureReason.FacilitatorMismatch]: X402Reason.UptoFacilitatorMismatch,
  eip712_name_mismatch: X402Reason.TokenNameMismatch,
  eip712_version_mismatch: X402Reason.TokenVersionMismatch,
};

/** A Permit2 payment's failures in the reference's Permit2 codes (`@x402/evm`'s exact facilitator). */
const PERMIT2_INVALID_REASON: Partial<Record<FailureReason, X402Reason>> = {
  [FailureReason.InvalidSignature]: X402Reason.Permit2Signature,
  [FailureReason.RecipientIsTreasury]: X402Reason.Permit2RecipientMismatch,
  [FailureReason.RecipientMismatch]: X402Reason.Permit2RecipientMismatch,
  [FailureReason.InvalidSpender]: X402Reason.Permit2Spender,
  [FailureReason.AmountMismatch]: X402Reason.Permit2AmountMismatch,
  [FailureReason.AmountBelowMinimum]: X402Reason.Permit2InvalidAmount,
  [FailureReason.TokenMismatch]: X402Reason.Permit2TokenMismatch,
  [FailureReason.NotYetValid]: X402Reason.Permit2NotYetValid,
  [FailureReason.Expired]: X402Reason.Permit2DeadlineExpired,
  [FailureReason.ExpiresTooSoon]: X402Reason.Permit2DeadlineExpired,
  [FailureReason.NonceUsed]: X402Reason.Permit2InvalidNonce,
  [FailureReason.NonceHeld]: X402Reason.Permit2InvalidNonce,
  [FailureReason.AllowanceRequired]: X402Reason.Permit2AllowanceRequired,
  [FailureReason.MechanismUnavailable]: X402Reason.Permit2ProxyNotDeployed,
};

const INVALID_REASON_OF_MECHANISM: Partial<Record<PaymentMechanismId, Partial<Record<FailureReason, X402Reason>>>> = {
  [EXACT_PERMIT2]: PERMIT2_INVALID_REASON,
  // the reference's upto facilitator answers in the Permit2 codes, and its own for the facilitator
  [UPTO_PERMIT2]: { ...PERMIT2_INVALID_REASON, [FailureReason.FacilitatorMismatch]: X402Reason.UptoFacilitatorMismatch },
};

/**
 * An approval permit's failure by the field at fault, in the reference's eip2612GasSponsoring codes. A
 * signature that does not recover the payer has no code of its own there (the reference finds it when its
 * simulation fails and then answers that the allowance is missing), so it is answered so here.
 */
const APPROVAL_PERMIT_REASON: Record<string, X402Reason> = {
  owner: X402Reason.Eip2612FromMismatch,
  token: X402Reason.Eip2612AssetMismatch,
  spender: X402Reason.Eip2612SpenderNotPermit2,
  deadline: X402Reason.Eip2612DeadlineExpired,
  value: X402Reason.Permit2612AmountMismatch,
  signature: X402Reason.Permit2AllowanceRequired,
};

/** The x402 `invalidReason` of a verification failure, in its payment's mechanism's codes where it has its own. */
export function x402InvalidReasonOf(failure: X402VerificationFailure): X402Reason {
  if (failure.reason === FailureReason.ApprovalPermitInvalid) return APPROVAL_PERMIT_REASON[String(failure.details.field)] ?? X402Reason.InvalidEip2612ExtensionFormat;
  const own = 'mechanism' in failure && failure.mechanism ? INVALID_REASON_OF_MECHANISM[failure.mechanism]?.[failure.reason] : undefined;
  return own ?? INVALID_REASON[failure.reason] ?? X402Reason.UnexpectedVerifyError;
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
export function x402SettleFailureOf(s: FailedSettlementLike): { errorReason: X402Reason; errorMessage: string } {
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

function transferFailureReason(reason: string): X402Reason {
  if (/exceeds balance|insufficient (funds|balance)|balance insufficient/i.test(reason)) return X402Reason.InsufficientFunds;
  if (/no longer approves/i.test(reason)) return X402Reason.Permit2AllowanceRequired;
  if (/cannot execute on this chain/i.test(reason)) return X402Reason.Permit2ProxyNotDeployed;
  // Permit2's and x402's proxies' own reverts, by their error names
  if (/UnauthorizedFacilitator/.test(reason)) return X402Reason.UptoUnauthorizedFacilitator;
  if (/AmountExceedsPermitted/.test(reason)) return X402Reason.UptoAmountExceedsPermitted;
  if (/InvalidNonce/.test(reason)) return X402Reason.Permit2InvalidNonce;
  if (/SignatureExpired/.test(reason)) return X402Reason.Permit2DeadlineExpired;
  if (/PaymentTooEarly/.test(reason)) return X402Reason.Permit2NotYetValid;
  if (/InvalidSigner|InvalidSignature/.test(reason)) return X402Reason.Permit2Signature;
  if (/TRANSFER_FROM_FAILED/.test(reason)) return X402Reason.InsufficientFunds;
  if (/used or cancel/i.test(reason)) return X402Reason.NonceAlreadyUsed;
  if (/expired/i.test(reason)) return X402Reason.AuthorizationValidBefore;
  if (/not yet valid/i.test(reason)) return X402Reason.AuthorizationValidAfter;
  if (/invalid signature/i.test(reason)) return X402Reason.Signature;
  return X402Reason.InvalidTransactionState;
}
