import { tokenSignature } from '@facilitator/chain-rpc';
import type { TransferAuthorization } from '@facilitator/core';
import type { SettlementWithVerification } from './step';

/** The signed authorization a settlement executes, as stored at verification. */
export function authorizationOf(settlement: SettlementWithVerification): TransferAuthorization {
  const v = settlement.verification;
  return {
    from: settlement.payer,
    to: settlement.merchant,
    value: BigInt(settlement.amount),
    validAfter: BigInt(v.validAfter ?? '0'),
    validBefore: BigInt(v.validBefore ?? '0'),
    nonce: settlement.nonce,
  };
}

/**
 * The signature the token is given: for an ERC-6492 payer, the wallet's own (inner) signature, which it
 * checks once deployed; the token knows nothing of ERC-6492.
 */
export function signatureOf(settlement: SettlementWithVerification): string {
  if (!settlement.verification.signature) throw new Error(`verification ${settlement.verificationId} has no signature`);
  return tokenSignature(settlement.verification.signature);
}

/** The stored signature as the payer sent it (ERC-6492-wrapped or not). */
export function rawSignatureOf(settlement: SettlementWithVerification): string {
  if (!settlement.verification.signature) throw new Error(`verification ${settlement.verificationId} has no signature`);
  return settlement.verification.signature;
}
