import type { VerificationRow } from '@facilitator/db';

/** Spec "Verification result (Form A)". */
export function formAVerificationResult(record: VerificationRow) {
  return {
    isValid: true,
    message: 'Payment verified',
    details: {
      verification_id: record.id,
      verified_amount: record.amount,
      verified_token: record.tokenAddress,
      merchant_address: record.merchant,
      payer_address: record.payer,
      verified_at: record.createdAt.toISOString(),
    },
  };
}

/** Spec "Verification result (Form B)". */
export function formBVerificationResult(record: VerificationRow) {
  return {
    verification_id: record.id,
    status: 'verified',
    transaction_hash: record.nonce,
    chain: record.networkName,
    verified_amount: record.amount,
    verified_token: record.tokenAddress,
    seller_address: record.merchant,
    verified_at: record.createdAt.toISOString(),
  };
}

/**
 * Spec "Status record" of a verification. `transaction_hash` is the hash of the transfer that settled
 * this payment, once one did (null before).
 */
export function verificationStatusRecord(record: VerificationRow, settlementTxHash: string | null) {
  return {
    id: record.id,
    type: 'verification',
    status: record.status,
    created_at: record.createdAt.toISOString(),
    updated_at: record.updatedAt.toISOString(),
    transaction_hash: settlementTxHash,
    chain: record.networkName,
    details: {
      seller_address: record.merchant,
      expected_amount: record.expectedAmount,
      verified_amount: record.status === 'verified' ? record.amount : null,
      payer_address: record.payer,
      token: record.tokenAddress,
      nonce: record.nonce,
      metadata: record.metadata ?? {},
      ...(record.status === 'rejected' ? { failure: { message: record.failureMessage, details: record.failureDetails } } : {}),
    },
  };
}
