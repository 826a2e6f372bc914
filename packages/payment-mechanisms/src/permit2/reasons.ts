import { FailureReason } from '../failure-reason';
import type { MechanismX402Reasons } from '../x402-reasons';

/** The reference's Permit2 codes (`@x402/evm`'s exact facilitator, `exact` through Permit2). */
export const PERMIT2_X402_CODES = {
  Signature: 'invalid_permit2_signature',
  RecipientMismatch: 'invalid_permit2_recipient_mismatch',
  Spender: 'invalid_permit2_spender',
  AmountMismatch: 'permit2_amount_mismatch',
  InvalidAmount: 'permit2_invalid_amount',
  TokenMismatch: 'permit2_token_mismatch',
  NotYetValid: 'permit2_not_yet_valid',
  DeadlineExpired: 'permit2_deadline_expired',
  InvalidNonce: 'permit2_invalid_nonce',
  AllowanceRequired: 'permit2_allowance_required',
  ProxyNotDeployed: 'permit2_proxy_not_deployed',
} as const;

/** The reference's eip2612GasSponsoring codes: the payer's EIP-2612 permit for Permit2 sent with the payment. */
export const EIP2612_X402_CODES = {
  FromMismatch: 'eip2612_from_mismatch',
  AssetMismatch: 'eip2612_asset_mismatch',
  SpenderNotPermit2: 'eip2612_spender_not_permit2',
  DeadlineExpired: 'eip2612_deadline_expired',
  AmountMismatch: 'permit2_2612_amount_mismatch',
  InvalidExtensionFormat: 'invalid_eip2612_extension_format',
} as const;

/** A Permit2 payment's failures in the reference's Permit2 codes. */
const PERMIT2_INVALID: Partial<Record<FailureReason, string>> = {
  [FailureReason.InvalidSignature]: PERMIT2_X402_CODES.Signature,
  [FailureReason.RecipientIsTreasury]: PERMIT2_X402_CODES.RecipientMismatch,
  [FailureReason.RecipientMismatch]: PERMIT2_X402_CODES.RecipientMismatch,
  [FailureReason.InvalidSpender]: PERMIT2_X402_CODES.Spender,
  [FailureReason.AmountMismatch]: PERMIT2_X402_CODES.AmountMismatch,
  [FailureReason.AmountBelowMinimum]: PERMIT2_X402_CODES.InvalidAmount,
  [FailureReason.TokenMismatch]: PERMIT2_X402_CODES.TokenMismatch,
  [FailureReason.NotYetValid]: PERMIT2_X402_CODES.NotYetValid,
  [FailureReason.Expired]: PERMIT2_X402_CODES.DeadlineExpired,
  [FailureReason.ExpiresTooSoon]: PERMIT2_X402_CODES.DeadlineExpired,
  [FailureReason.NonceUsed]: PERMIT2_X402_CODES.InvalidNonce,
  [FailureReason.NonceHeld]: PERMIT2_X402_CODES.InvalidNonce,
  [FailureReason.AllowanceRequired]: PERMIT2_X402_CODES.AllowanceRequired,
  [FailureReason.MechanismUnavailable]: PERMIT2_X402_CODES.ProxyNotDeployed,
};

/**
 * An approval permit's failure by the field at fault, in the reference's eip2612GasSponsoring codes. A
 * signature that does not recover the payer has no code of its own there (the reference finds it when its
 * simulation fails and then answers that the allowance is missing), so it is answered so here.
 */
const APPROVAL_PERMIT_BY_FIELD: Record<string, string> = {
  owner: EIP2612_X402_CODES.FromMismatch,
  token: EIP2612_X402_CODES.AssetMismatch,
  spender: EIP2612_X402_CODES.SpenderNotPermit2,
  deadline: EIP2612_X402_CODES.DeadlineExpired,
  value: EIP2612_X402_CODES.AmountMismatch,
  signature: PERMIT2_X402_CODES.AllowanceRequired,
};

/**
 * A failed settlement of a payment through Permit2 and x402's proxies, by the engine's words for a condition
 * only a Permit2 payment has (its pre-flight's) and by Permit2's and the proxies' reverts' error names.
 */
export const PERMIT2_ENGINE_SETTLE_FAILURES: ReadonlyArray<readonly [RegExp, string]> = [
  [/no longer approves/i, PERMIT2_X402_CODES.AllowanceRequired],
  [/cannot execute on this chain/i, PERMIT2_X402_CODES.ProxyNotDeployed],
];
export const PERMIT2_REVERT_SETTLE_FAILURES: ReadonlyArray<readonly [RegExp, string]> = [
  [/InvalidNonce/, PERMIT2_X402_CODES.InvalidNonce],
  [/SignatureExpired/, PERMIT2_X402_CODES.DeadlineExpired],
  [/PaymentTooEarly/, PERMIT2_X402_CODES.NotYetValid],
  [/InvalidSigner|InvalidSignature/, PERMIT2_X402_CODES.Signature],
];

/** The x402 codes of a payment through Permit2 and an x402 proxy, whichever proxy (`exact`'s, `upto`'s). */
export const PERMIT2_X402_REASONS: MechanismX402Reasons = {
  invalid: PERMIT2_INVALID,
  approvalPermit: { byField: APPROVAL_PERMIT_BY_FIELD, otherwise: EIP2612_X402_CODES.InvalidExtensionFormat },
  settleFailures: [...PERMIT2_ENGINE_SETTLE_FAILURES, ...PERMIT2_REVERT_SETTLE_FAILURES],
};
