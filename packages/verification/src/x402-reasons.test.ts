import { ErrorCode } from '@facilitator/core';
import { EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2 } from '@facilitator/payment-mechanisms';
import { FailureReason, type VerificationFailure } from './failure-reasons';
import { x402InvalidReasonOf, x402SettleFailureOf } from './x402-reasons';

const failure = (reason: VerificationFailure['reason'], mechanism?: VerificationFailure['mechanism'], details: Record<string, unknown> = {}): VerificationFailure => ({ reason, message: '', details, mechanism });

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
    // upto answers in the Permit2 codes too
    expect(x402InvalidReasonOf(failure(reason, UPTO_PERMIT2))).toBe(permit2);
  });

  it("a condition only some mechanisms have is answered in the code of one that has it, whatever the payment's mechanism", () => {
    for (const mechanism of [undefined, EXACT_EIP3009, EXACT_PERMIT2, UPTO_PERMIT2] as const) {
      expect(x402InvalidReasonOf(failure(FailureReason.FacilitatorMismatch, mechanism))).toBe('upto_facilitator_mismatch');
      expect(x402InvalidReasonOf(failure(FailureReason.ApprovalPermitInvalid, mechanism, { field: 'owner' }))).toBe('eip2612_from_mismatch');
    }
  });

  it.each([
    ['owner', 'eip2612_from_mismatch'],
    ['token', 'eip2612_asset_mismatch'],
    ['spender', 'eip2612_spender_not_permit2'],
    ['deadline', 'eip2612_deadline_expired'],
    ['value', 'permit2_2612_amount_mismatch'],
    ['signature', 'permit2_allowance_required'],
    ['nonce', 'invalid_eip2612_extension_format'],
  ])("an approval permit's %s at fault: %s (the reference's eip2612GasSponsoring codes)", (field, code) => {
    expect(x402InvalidReasonOf(failure(FailureReason.ApprovalPermitInvalid, EXACT_PERMIT2, { field }))).toBe(code);
    expect(x402InvalidReasonOf(failure(FailureReason.ApprovalPermitInvalid, UPTO_PERMIT2, { field }))).toBe(code);
  });

  it("a token's EIP-712 domain other than the one claimed: the reference's exact EVM codes", () => {
    expect(x402InvalidReasonOf({ reason: 'eip712_name_mismatch', message: '', details: {} })).toBe('invalid_exact_evm_token_name_mismatch');
    expect(x402InvalidReasonOf({ reason: 'eip712_version_mismatch', message: '', details: {} })).toBe('invalid_exact_evm_token_version_mismatch');
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
    ['execution reverted: UnauthorizedFacilitator()', 'upto_unauthorized_facilitator'],
    ['execution reverted: AmountExceedsPermitted()', 'upto_amount_exceeds_permitted'],
    // upto's own revert before a Permit2 one its mechanism also lists, as upto's proxy orders them
    ['execution reverted: UnauthorizedFacilitator() InvalidSignature()', 'upto_unauthorized_facilitator'],
    ['execution reverted: TRANSFER_FROM_FAILED', 'insufficient_funds'],
    ['FiatTokenV2: authorization is used or canceled', 'invalid_exact_evm_nonce_already_used'],
    ['FiatTokenV2: authorization is expired', 'invalid_exact_evm_payload_authorization_valid_before'],
    ['FiatTokenV2: authorization is not yet valid', 'invalid_exact_evm_payload_authorization_valid_after'],
    ['FiatTokenV2: invalid signature', 'invalid_exact_evm_payload_signature'],
    ['something else entirely', 'invalid_transaction_state'],
  ])('%s: %s', (reason, code) => {
    expect(failedWith(reason)).toBe(code);
  });
});
