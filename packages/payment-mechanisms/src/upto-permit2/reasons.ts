import { FailureReason } from '../failure-reason';
import { PERMIT2_ENGINE_SETTLE_FAILURES, PERMIT2_REVERT_SETTLE_FAILURES, PERMIT2_X402_REASONS } from '../permit2/reasons';
import type { MechanismX402Reasons } from '../x402-reasons';

/** The reference's upto codes (`@x402/evm`'s upto facilitator). */
export const UPTO_X402_CODES = {
  FacilitatorMismatch: 'upto_facilitator_mismatch',
  SettlementExceedsAmount: 'invalid_upto_evm_payload_settlement_exceeds_amount',
  AmountExceedsPermitted: 'upto_amount_exceeds_permitted',
  UnauthorizedFacilitator: 'upto_unauthorized_facilitator',
} as const;

/**
 * The reference's upto facilitator answers in the Permit2 codes, and in its own for what only upto has: the
 * facilitator its payer names, an amount settled up to the signed maximum, and its proxy's reverts of those.
 */
export const UPTO_PERMIT2_X402_REASONS: MechanismX402Reasons = {
  ...PERMIT2_X402_REASONS,
  invalid: { ...PERMIT2_X402_REASONS.invalid, [FailureReason.FacilitatorMismatch]: UPTO_X402_CODES.FacilitatorMismatch },
  settleAboveSigned: UPTO_X402_CODES.SettlementExceedsAmount,
  settleFailures: [
    ...PERMIT2_ENGINE_SETTLE_FAILURES,
    [/UnauthorizedFacilitator/, UPTO_X402_CODES.UnauthorizedFacilitator],
    [/AmountExceedsPermitted/, UPTO_X402_CODES.AmountExceedsPermitted],
    ...PERMIT2_REVERT_SETTLE_FAILURES,
  ],
};
