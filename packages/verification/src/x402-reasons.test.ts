import { EXACT_EIP3009, EXACT_PERMIT2 } from '@facilitator/core';
import { FailureReason, type VerificationFailure } from './failure-reasons';
import { x402InvalidReasonOf } from './x402-reasons';

const failure = (reason: VerificationFailure['reason'], mechanism?: VerificationFailure['mechanism']): VerificationFailure => ({ reason, message: '', details: {}, mechanism });

describe("x402 invalidReason: a payment's failure in its mechanism's codes", () => {
  it.each([
    [FailureReason.InvalidSignature, 'invalid_exact_evm_payload_signature', 'invalid_permit2_signature'],
    [FailureReason.RecipientMismatch, 'invalid_exact_evm_payload_recipient_mismatch', 'invalid_permit2_recipient_mismatch'],
    [FailureReason.AmountMismatch, 'invalid_exact_evm_payload_authorization_value', 'permit2_amount_mismatch'],
    [FailureReason.Expired, 'invalid_exact_evm_payload_authorization_valid_before', 'permit2_deadline_expired'],
    [FailureReason.NotYetValid, 'invalid_exact_evm_payload_authorization_valid_after', 'permit2_not_yet_valid'],
    [FailureReason.NonceUsed, 'invalid_exact_evm_nonce_already_used', 'permit2_invalid_nonce'],
    [FailureReason.InvalidSpender, 'invalid_payload', 'invalid_permit2_spender'],
    [FailureReason.AllowanceRequired, 'insufficient_funds', 'permit2_allowance_required'],
  ])('%s: EIP-3009 %s, Permit2 %s (the reference\'s codes)', (reason, eip3009, permit2) => {
    expect(x402InvalidReasonOf(failure(reason, EXACT_EIP3009))).toBe(eip3009);
    expect(x402InvalidReasonOf(failure(reason))).toBe(eip3009);
    expect(x402InvalidReasonOf(failure(reason, EXACT_PERMIT2))).toBe(permit2);
  });
});
