/** `exact` through EIP-3009 `transferWithAuthorization`: the token checks the payer's signature itself. */
export const EXACT_EIP3009 = 'exact/eip3009';
/** `exact` through Permit2 and x402's exact proxy (docs/decisions/mechanisms.md). */
export const EXACT_PERMIT2 = 'exact/permit2';
/**
 * `upto` through Permit2 and x402's upto proxy: a signed maximum; the merchant settles up to it, from the
 * facilitator the payer named (docs/decisions/mechanisms.md).
 */
export const UPTO_PERMIT2 = 'upto/permit2';
/** Every mechanism id this engine registers: what `mechanism` columns hold. */
export type PaymentMechanismId = typeof EXACT_EIP3009 | typeof EXACT_PERMIT2 | typeof UPTO_PERMIT2;
