import type { ApprovalCapability } from './capabilities';
import type { ApprovalPermit, PaymentTerms } from './mechanism';
import { eip2612PermitSigner } from './permit2/eip2612';

/** What is wrong with a payment's approval permit, by the field at fault (verification answers each in its code). */
export type ApprovalPermitProblem = { field: 'owner' | 'token' | 'spender' | 'value' | 'deadline' | 'signature'; reason: string };

/**
 * Whether a payment's approval permit does what the payment needs, read offline (the reference's
 * `validateEip2612PermitForPayment`, and the signature): the payer's own (its owner is the payer), on the
 * payment's token, for the contract the mechanism moves through (Permit2), still usable `marginSeconds`
 * from now, for exactly the payment's signed amount (x402's proxies revert `Permit2612AmountMismatch`
 * otherwise), and signed by its owner under the token's EIP-712 domain (an owner with code is not
 * accepted: its wallet's check cannot be run offline). Whether its nonce is the token's next one is asked
 * of the chain with the approval (`PayerApproval.permit`).
 */
export function approvalPermitProblem(
  approval: Pick<ApprovalCapability<unknown>, 'spender'>,
  permit: ApprovalPermit,
  terms: PaymentTerms,
  tokenDomainSeparator: Uint8Array,
  nowSeconds: bigint,
  marginSeconds: bigint,
): ApprovalPermitProblem | undefined {
  if (permit.owner !== terms.payer) return { field: 'owner', reason: `the permit's owner ${permit.owner} is not the payer ${terms.payer}` };
  if (permit.token !== terms.token) return { field: 'token', reason: `the permit is for the token ${permit.token}, the payment moves ${terms.token}` };
  if (permit.spender !== approval.spender) {
    return { field: 'spender', reason: `the permit lets ${permit.spender} move the token; the payment moves through ${approval.spender}` };
  }
  if (permit.deadline < nowSeconds + marginSeconds) {
    return { field: 'deadline', reason: `the permit's deadline ${permit.deadline} is before now (${nowSeconds}) plus ${marginSeconds} s` };
  }
  // it must last as long as the payment (the reference's client signs both with one deadline): settlement
  // checks only the payment's validity before the fee, and a permit that lapsed after it would leave the
  // fee taken and the transfer refused
  if (permit.deadline < terms.validBefore - 1n) {
    return { field: 'deadline', reason: `the permit's deadline ${permit.deadline} is before the payment's own (${terms.validBefore - 1n})` };
  }
  if (permit.value !== terms.amount) return { field: 'value', reason: `the permit approves ${permit.value}; the payment's permitted amount is ${terms.amount}` };
  const signer = eip2612PermitSigner(tokenDomainSeparator, permit);
  if (!signer.ok) return { field: 'signature', reason: signer.reason };
  if (signer.address !== permit.owner) return { field: 'signature', reason: `the permit was signed by ${signer.address}, not by its owner ${permit.owner}` };
  return undefined;
}
