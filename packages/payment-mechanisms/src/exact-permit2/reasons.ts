import { PERMIT2_X402_REASONS } from '../permit2/reasons';
import type { MechanismX402Reasons } from '../x402-reasons';

/** `exact` through Permit2 answers in the reference's Permit2 and eip2612GasSponsoring codes, and no others. */
export const EXACT_PERMIT2_X402_REASONS: MechanismX402Reasons = PERMIT2_X402_REASONS;
