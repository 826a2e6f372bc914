import { ErrorCode } from '@facilitator/core';
import { FailureReason, type VerificationFailure } from './failure-reasons';
import { x402InvalidReasonOf, x402SettleFailureOf } from './x402-reasons';
import { EXACT_EIP3009, EXACT_PERMIT2 } from '@facilitator/payment-mechanisms';

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

describe("x402 errorReason of a failed settlement: the engine's reason, and Permit2's and its proxy's reverts", () => {
  const failedWith = (reason: string) => x402SettleFailureOf({ errorCode: ErrorCode.SettlementFailed, errorMessage: 'settlement failed', errorDetails: { reason } }).errorReason;

  it.each([
    ['payer balance insufficient', 'insufficient_funds'],
    ['FiatTokenV2: transfer amount exceeds balance', 'insufficient_funds'],
    ['the payer no longer approves enough for the payment', 'permit2_allowance_required'],
    ['the payment mechanism cannot execute on this chain', 'permit2_proxy_not_deployed'],
    ['execution reverted: InvalidNonce()', 'permit2_invalid_nonce'],
    ['execution reverted: SignatureExpired(1900000000)', 'permit2_deadline_expired'],
    ['execution reverted: PaymentTooEarly()', 'permit2_not_yet_valid'],
    ['execution reverted: InvalidSigner()', 'invalid_permit2_signature'],
    ['execution reverted: TRANSFER_FROM_FAILED', 'insufficient_funds'],
    ['something else entirely', 'invalid_transaction_state'],
  ])('%s: %s', (reason, code) => {
    expect(failedWith(reason)).toBe(code);
  });
});
