import { IdPrefix, newId } from '@facilitator/core';
import type { NewVerificationRow } from '@facilitator/db';
import type { Payment } from './payment';

/**
 * Largest request body kept with a verified payment, as JSON. Form B's free-form `metadata` has its own
 * 4 KiB limit (400 above it); Form A and `/x402` bodies may carry any extra fields up to the body limit
 * (x402 middleware sends the merchant's whole requirements, descriptions and output schemas included), so
 * rather than refuse a payment for them, a larger body is not kept: the row still holds who paid whom,
 * what and how (payer, merchant, amounts, token, nonce, validity, signature), and a stranger's verified
 * payments cannot make rows large.
 */
export const MAX_STORED_REQUEST_BYTES = 8192;

function storedRequest(request: unknown): object {
  const bytes = Buffer.byteLength(JSON.stringify(request) ?? '', 'utf8');
  return bytes <= MAX_STORED_REQUEST_BYTES ? (request as object) : { omitted: `the request was ${bytes} bytes of JSON; at most ${MAX_STORED_REQUEST_BYTES} are kept` };
}

/**
 * The row stored for a verification of `payment`: verified, or rejected with the failure's message and
 * details. A rejected one keeps who, what and why for support, not the request body, its metadata or a
 * signature (free-form and up to the body limit: a stranger's rejected requests must not fill the disk).
 */
export function verificationRecordOf(payment: Payment, failure?: { message: string; details: Record<string, unknown> }): NewVerificationRow {
  const { terms, network, expected, mechanism } = payment;
  return {
    id: newId(IdPrefix.Verification),
    status: failure ? 'rejected' : 'verified',
    protocolVersion: payment.protocolVersion,
    surface: payment.surface,
    chainId: network.chainId,
    network: network.caip2,
    networkName: payment.networkName,
    tokenAddress: network.tokenAddress,
    payer: terms.payer,
    merchant: expected.payTo,
    amount: terms.amount.toString(),
    expectedAmount: expected.amount.toString(),
    // the columns are the terms' projection (normalized validity, the nonce as bytes32); the payload is the payment
    nonce: terms.nonce.value,
    validAfter: terms.validAfter.toString(),
    validBefore: terms.validBefore.toString(),
    signature: failure ? null : payment.signature,
    authorizationFingerprint: mechanism.fingerprint(payment.payload, network),
    mechanism: mechanism.id,
    scheme: mechanism.scheme,
    nonceSpace: terms.nonce.space,
    payload: failure ? null : mechanism.toStored(payment.payload),
    request: failure ? null : storedRequest(payment.request),
    metadata: failure ? null : ((payment.metadata as object | undefined) ?? null),
    webhookUrl: payment.webhookUrl ?? null,
    failureMessage: failure?.message ?? null,
    failureDetails: (failure?.details as object | undefined) ?? null,
  };
}

/** Stamps a row with the milliseconds its verify took so far (the status page's verify latency). */
export type Timed = (row: NewVerificationRow) => NewVerificationRow;

/** Times rows from `startedAt` (performance.now()): the checks and chain reads, not the insert that follows. */
export function timedFrom(startedAt: number): Timed {
  return (row) => ({ ...row, verifyMs: Math.round(performance.now() - startedAt) });
}
