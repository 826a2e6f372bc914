import type { Settlement } from '@facilitator/db';
import { isFinal, statusOf } from '@facilitator/settlement';

const iso = (date: Date | null) => (date ? date.toISOString() : null);

export function feeCollectionStatus(s: Settlement): 'collected' | 'failed' | 'pending' | 'not_collected' {
  if (s.feeCollectedAt) return 'collected';
  if (paidWithoutOurFee(s)) return 'not_collected';
  // an upto amount below the fee is charged none (docs/decisions.md, "`upto` served"): there is nothing to await
  if (BigInt(s.feeAmount) === 0n) return 'not_collected';
  if (s.state === 'failed') return s.errorCode === 'fee_collection_failed' ? 'failed' : 'not_collected';
  return 'pending';
}

/** Spec "Settlement result (Form A)", with the fee breakdown variant's timestamps. */
export function formASettlementResult(s: Settlement) {
  return {
    success: true,
    transaction: null,
    message: 'Payment settled',
    details: {
      settlement_id: s.id,
      verification_id: s.verificationId,
      settled_amount: s.amount,
      merchant_received: Number(s.amount),
      settlement_tx_hash: s.settlementTxHash,
      pricing_model: 'flat_rate',
      // the customer was charged and the merchant paid by a transaction that was not ours: paid, with no fee to report
      ...(paidWithoutOurFee(s) ? noFeeOfOurs() : feeCollected(s)),
      settlement_timestamp: iso(s.settledAt),
    },
  };
}

/** The fee fields of a settlement whose fee we collected before the payer's transfer. */
function feeCollected(s: Settlement) {
  const fee = BigInt(s.feeAmount);
  return {
    fee_amount_wei: Number(fee),
    fee_collection_status: 'collected',
    fee_tx_hash: s.feeTxHash,
    fee_collected_first: true,
    description: `A flat fee of ${fee} token units was collected from the merchant (transferFrom against the merchant's allowance to the treasury) before the payer's transfer was executed; the payer paid exactly the price.`,
    fee_collection_timestamp: iso(s.feeCollectedAt),
  };
}

/** The fee fields of a payment another transaction executed to the merchant before ours could: no fee taken. */
function noFeeOfOurs() {
  return {
    fee_amount_wei: 0,
    fee_collection_status: 'not_collected',
    fee_tx_hash: null,
    fee_collected_first: false,
    description: 'The payment was executed to the merchant by a transaction that was not ours (settlement_tx_hash): the payer was charged and the merchant paid; no fee was collected for it.',
    fee_collection_timestamp: null,
  };
}

/**
 * Settled with no fee transaction of ours: another transaction than ours executed the payment to the merchant
 * before any of ours could (docs/decisions/settlement.md, "Paid by another transaction"). Ours always leave a fee
 * hash (the sequential fee, or the atomic batch that took it); a fee-free settlement (fee 0) is not this.
 */
function paidWithoutOurFee(s: Settlement): boolean {
  return s.state === 'settled' && s.feeTxHash === null && BigInt(s.feeAmount) > 0n;
}

/** Form A answer when the outcome is not known within the wait: 202, poll the status record. */
export function formASettlementPending(s: Settlement) {
  return {
    success: false,
    transaction: null,
    message: `settlement in progress; poll GET /v1/settlements/${s.id}`,
    details: { settlement_id: s.id, verification_id: s.verificationId, status: 'pending', state: s.state, waiting_reason: s.waitingReason },
  };
}

/** Spec "Settlement result (Form B)": the create response. */
export function formBSettlementCreated(s: Settlement) {
  return {
    settlement_id: s.id,
    verification_id: s.verificationId,
    status: statusOf(s.state),
    transaction_hash: s.state === 'settled' ? s.settlementTxHash : null,
    destination_address: s.merchant,
    created_at: s.createdAt.toISOString(),
  };
}

/** Spec "Status record" of a settlement, plus the processing state, both hashes and the error. */
export function settlementStatusRecord(s: Settlement) {
  return {
    id: s.id,
    type: 'settlement',
    status: statusOf(s.state),
    state: s.state,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    transaction_hash: s.state === 'settled' ? s.settlementTxHash : null,
    settled_at: iso(s.settledAt),
    details: {
      verification_id: s.verificationId,
      destination_address: s.merchant,
      settled_amount: s.state === 'settled' ? s.amount : '0',
      payer_address: s.payer,
      amount: s.amount,
      fee_amount: s.feeAmount,
      fee_collection_status: feeCollectionStatus(s),
      fee_tx_hash: s.feeTxHash,
      settlement_tx_hash: s.settlementTxHash,
      fee_collection_timestamp: iso(s.feeCollectedAt),
      metadata: s.metadata ?? {},
    },
    // once ended: its transactions watched for reorgs until FINALITY_DEPTH deep (watching, reorged, final, changed)
    finality: isFinal(s.state) ? { status: s.finality ?? 'watching', reorgs: s.reorgCount } : null,
    // while it waits in its state for the chain (gas above the cap, no relayer with gas): why, and since when
    waiting: s.waitingReason ? { reason: s.waitingReason, since: iso(s.waitingSince), details: s.waitingDetail ?? {} } : null,
    ...(s.state === 'failed' ? { error: { code: s.errorCode, message: s.errorMessage, details: s.errorDetails ?? {} } } : {}),
  };
}
