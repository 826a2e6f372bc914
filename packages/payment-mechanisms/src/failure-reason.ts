/**
 * Why a verification failed, as stable codes (the messages are for people). The x402 surface maps
 * these to the x402 specification's `invalidReason` values, in a mechanism's own codes where it has
 * them (`PaymentMechanism.x402.reasons`): the vocabulary both sides speak, so it lives below both.
 */
export const FailureReason = {
  InvalidSignature: 'invalid_signature',
  RecipientIsTreasury: 'recipient_is_treasury',
  RecipientMismatch: 'recipient_mismatch',
  AmountMismatch: 'amount_mismatch',
  AmountBelowMinimum: 'amount_below_minimum',
  TokenMismatch: 'token_mismatch',
  /** the payer let another contract than the one settlement executes through move its tokens (Permit2's spender) */
  InvalidSpender: 'invalid_spender',
  NotYetValid: 'not_yet_valid',
  Expired: 'expired',
  ExpiresTooSoon: 'expires_too_soon',
  NonceUsed: 'nonce_used',
  /** another authorization with the same payer and nonce is verified or being settled */
  NonceHeld: 'nonce_held',
  /** the payer has not let the contract that checks its signature (Permit2) move enough of the token */
  AllowanceRequired: 'allowance_required',
  /** the payer named who alone may execute the payment (upto's facilitator), and it is not this service */
  FacilitatorMismatch: 'facilitator_mismatch',
  /**
   * the payer's approval permit sent with the payment (x402's eip2612GasSponsoring) does not give what the
   * payment needs; `details.field` says which of its fields is at fault
   */
  ApprovalPermitInvalid: 'approval_permit_invalid',
  /** a contract the payment's mechanism settles through is missing on this chain (x402's Permit2 proxy) */
  MechanismUnavailable: 'mechanism_unavailable',
} as const;

export type FailureReason = (typeof FailureReason)[keyof typeof FailureReason];
