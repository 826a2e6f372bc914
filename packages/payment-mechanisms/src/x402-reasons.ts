import type { FailureReason } from './failure-reason';

/**
 * A mechanism's own x402 reason codes: where the reference facilitator (`@x402/evm`) answers a condition of
 * this mechanism's payments in codes of its own rather than the specification's generic ones. The x402
 * surface answers a payment's failure in its mechanism's code when it has one, else in the generic code;
 * so a mechanism with none of its own (EIP-3009: the specification's `exact` EVM codes are its) sets none.
 */
export interface MechanismX402Reasons {
  /** its code for a verification failure, by reason */
  readonly invalid?: Readonly<Partial<Record<FailureReason, string>>>;
  /**
   * Its codes for the approval permit its payments carry (`FailureReason.ApprovalPermitInvalid`), by the
   * permit's field at fault (`details.field`), and `otherwise` for a failure naming no known field.
   */
  readonly approvalPermit?: { readonly byField: Readonly<Record<string, string>>; readonly otherwise: string };
  /**
   * A request asking to settle more than the payer signed, for a mechanism whose signed amount is a maximum
   * (`signedAmount: 'maximum'`).
   */
  readonly settleAboveSigned?: string;
  /**
   * A failed settlement's reason (its contracts' reverts, by their error names) and its code: the first
   * pattern that matches the reason answers.
   */
  readonly settleFailures?: ReadonlyArray<readonly [pattern: RegExp, code: string]>;
}
