/**
 * Every error code the API can answer with, in one place. The first five are the spec's; the rest
 * fill its "not shown" gaps (see docs/decisions.md).
 */
export const ErrorCode = {
  VerificationFailed: 'verification_failed',
  InsufficientAllowance: 'insufficient_allowance',
  FeeCollectionFailed: 'fee_collection_failed',
  SettlementFailed: 'settlement_failed',
  NotFound: 'not_found',
  MethodNotAllowed: 'method_not_allowed',
  InvalidRequest: 'invalid_request',
  UnsupportedNetwork: 'unsupported_network',
  Unauthorized: 'unauthorized',
  PaymentConflict: 'payment_conflict',
  PaymentIdentifierConflict: 'payment_identifier_conflict',
  IdempotencyKeyInFlight: 'idempotency_key_in_flight',
  IdempotencyKeyReused: 'idempotency_key_reused',
  PayloadTooLarge: 'payload_too_large',
  RateLimited: 'rate_limited',
  ServiceUnavailable: 'service_unavailable',
  InternalError: 'internal_error',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
