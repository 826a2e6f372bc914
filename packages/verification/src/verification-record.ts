import { IdPrefix, newId } from '@facilitator/core';
import type { NewVerificationRow } from '@facilitator/db';
import type { Payment } from './payment';

/**
 * The row stored for a verification of `payment`: verified, or rejected with the failure's message and
 * details. A rejected one keeps who, what and why for support, not the request body, its metadata or a
 * signature (free-form and up to the body limit: a stranger's rejected requests must not fill the disk).
 */
export function verificationRecordOf(payment: Payment, failure?: { message: string; details: Record<string, unknown> }): NewVerificationRow {
  const { authorization, network, expected } = payment;
  return {
    id: newId(IdPrefix.Verification),
    status: failure ? 'rejected' : 'verified',
    protocolVersion: payment.protocolVersion,
    surface: payment.surface,
    chainId: network.chainId,
    network: payment.networkName,
    tokenAddress: network.tokenAddress,
    payer: authorization.from,
    merchant: expected.payTo,
    amount: authorization.value.toString(),
    expectedAmount: expected.amount.toString(),
    nonce: authorization.nonce,
    validAfter: authorization.validAfter.toString(),
    validBefore: authorization.validBefore.toString(),
    signature: failure ? null : payment.signature,
    request: failure ? null : (payment.request as object),
    metadata: failure ? null : ((payment.metadata as object | undefined) ?? null),
    webhookUrl: payment.webhookUrl ?? null,
    failureMessage: failure?.message ?? null,
    failureDetails: (failure?.details as object | undefined) ?? null,
  };
}
