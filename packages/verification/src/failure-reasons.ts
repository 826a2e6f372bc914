import type { FailureReason, PaymentMechanismId } from '@facilitator/payment-mechanisms';

// the reasons are the mechanisms' vocabulary too (their x402 codes are keyed by them): they live there
export { FailureReason } from '@facilitator/payment-mechanisms';

export interface VerificationFailure {
  reason: FailureReason;
  /** the mechanism of the payment it failed, when known: the x402 surface answers in that mechanism's codes */
  mechanism?: PaymentMechanismId;
  /** the spec's message, e.g. "invalid signature" */
  message: string;
  details: Record<string, unknown>;
}
