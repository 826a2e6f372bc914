import type { Settlement, Verification } from '../generated/prisma/client';
import { dateColumn, optionalDateColumn } from './pg-query';
import { fromColumns as verificationFromColumns } from './verification-row';

/** A settlement read with the verification it settles. */
export type SettlementWithVerificationRow = Settlement & { verification: Verification };

/** States in which the payer's authorization is spent or about to be: its nonce may not be verified again. */
export const NONCE_CONSUMING_STATES = ['fee_collected', 'executing', 'settled'] as const;

/** The fields a settlement step may write together with its new state. */
export interface SettlementUpdate {
  paymentKey?: string | null;
  feeTxHash?: string | null;
  feeCollectedAt?: Date | null;
  settlementTxHash?: string | null;
  settledAt?: Date | null;
  merchantPaid?: boolean;
  errorCode?: string | null;
  errorMessage?: string | null;
  errorDetails?: object | null;
  /** set on entering collect_fee: which path moves the money */
  settlementMode?: 'atomic' | 'sequential';
  /**
   * decided once when the settlement is created; rewritten only when the chain took another amount (the
   * executor's delegation changed while a batch was in flight), so that the row reports what was taken
   */
  feeAmount?: string;
  /**
   * settled by a transaction that is not the settlement's own (someone else executed its payment): stored with
   * the transition in settlement_foreign_executions, where the finality watcher watches its block
   */
  foreignExecution?: ForeignExecutionBlock;
  /** written when the pre-flight passes: the worker's seal over the payment it admitted (settlement-admission.ts) */
  admission?: string;
}

/** The transaction that executed a settlement's payment, not being its own, and the block that holds it. */
export interface ForeignExecutionBlock {
  txHash: string;
  blockNumber: number;
  blockHash: string;
}

/** Column of each updatable field; the order fixes the order of the SET list and of its values. */
export const UPDATE_COLUMNS: ReadonlyArray<readonly [keyof SettlementUpdate, string]> = [
  ['paymentKey', 'payment_key'],
  ['feeTxHash', 'fee_tx_hash'],
  ['feeCollectedAt', 'fee_collected_at'],
  ['settlementTxHash', 'settlement_tx_hash'],
  ['settledAt', 'settled_at'],
  ['merchantPaid', 'merchant_paid'],
  ['errorCode', 'error_code'],
  ['errorMessage', 'error_message'],
  ['errorDetails', 'error_details'],
  ['settlementMode', 'settlement_mode'],
  ['feeAmount', 'fee_amount'],
  ['admission', 'admission'],
];

/** A settlements row as `pg` returns it (snake_case), in Prisma's shape. */
export function settlementFromColumns(r: Record<string, unknown>): Settlement {
  return {
    id: r.id as string,
    verificationId: r.verification_id as string,
    paymentKey: r.payment_key as string | null,
    surface: r.surface as string,
    state: r.state as Settlement['state'],
    chainId: r.chain_id as number,
    network: r.network as string,
    tokenAddress: r.token_address as string,
    payer: r.payer as string,
    merchant: r.merchant as string,
    amount: r.amount as string,
    nonce: r.nonce as string,
    authorizationFingerprint: (r.authorization_fingerprint as string | null) ?? null,
    mechanism: r.mechanism as string,
    scheme: (r.scheme as string | undefined) ?? 'exact',
    nonceSpace: r.nonce_space as string,
    payload: (r.payload as Settlement['payload'] | undefined) ?? null,
    feeAmount: r.fee_amount as string,
    feeTxHash: r.fee_tx_hash as string | null,
    feeCollectedAt: optionalDateColumn(r.fee_collected_at),
    settlementTxHash: r.settlement_tx_hash as string | null,
    settledAt: optionalDateColumn(r.settled_at),
    merchantPaid: r.merchant_paid as boolean,
    errorCode: r.error_code as string | null,
    errorMessage: r.error_message as string | null,
    errorDetails: r.error_details as Settlement['errorDetails'],
    attentionReason: (r.attention_reason as string | null) ?? null,
    attentionAt: optionalDateColumn(r.attention_at),
    waitingReason: (r.waiting_reason as string | null) ?? null,
    waitingSince: optionalDateColumn(r.waiting_since),
    waitingDetail: (r.waiting_detail as Settlement['waitingDetail']) ?? null,
    finality: (r.finality as string | null) ?? null,
    reorgCount: (r.reorg_count as number | undefined) ?? 0,
    settlementMode: (r.settlement_mode as string | null | undefined) ?? null,
    admission: (r.admission as string | null | undefined) ?? null,
    sendClaimedAt: optionalDateColumn(r.send_claimed_at),
    transferDecision: (r.transfer_decision as string | null | undefined) ?? null,
    metadata: r.metadata as Settlement['metadata'],
    createdAt: dateColumn(r.created_at),
    updatedAt: dateColumn(r.updated_at),
  };
}

/** A settlement joined with its verification, the latter aggregated into a `verification` json column. */
export function settlementWithVerificationFromColumns(r: Record<string, unknown>): SettlementWithVerificationRow {
  return { ...settlementFromColumns(r), verification: verificationFromColumns(r.verification as Record<string, unknown>) };
}
