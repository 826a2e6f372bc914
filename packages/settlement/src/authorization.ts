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

export function signatureOf(settlement: SettlementWithVerification): string {
  if (!settlement.verification.signature) throw new Error(`verification ${settlement.verificationId} has no signature`);
  return settlement.verification.signature;
}
