import type { Settlement } from '@facilitator/db';
import { settlementRow } from '@facilitator/db/testing';
import { formASettlementPending, formASettlementResult, formBSettlementCreated, settlementStatusRecord } from './settlement';
import { publicSettlementRecord } from './public-settlement';

const CREATED = new Date('2024-05-01T10:00:00.000Z');
const UPDATED = new Date('2024-05-01T10:00:09.000Z');
const FEE_AT = new Date('2024-05-01T10:00:04.000Z');
const SETTLED_AT = new Date('2024-05-01T10:00:08.000Z');
const MERCHANT = '0x' + 'aa'.repeat(20);
const PAYER = '0x' + '11'.repeat(20);
const FEE_TX = '0x' + 'fe'.repeat(32);
const SETTLE_TX = '0x' + 'f0'.repeat(32);

/** A settled settlement; `fields` move it elsewhere. */
function settledRow(fields: Partial<Settlement> = {}): Settlement {
  return settlementRow({
    id: 'stl_01',
    verificationId: 'ver_01',
    paymentKey: `84532:0x036cbd53842c5426634e7929541ec2318f3dcf7e:${PAYER}:0x${'0c'.repeat(32)}`,
    surface: 'v1',
    state: 'settled',
    chainId: 84532,
    tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
    payer: PAYER,
    merchant: MERCHANT,
    amount: '1000000',
    nonce: '0x' + '0c'.repeat(32),
    authorizationFingerprint: 'ab'.repeat(32),
    feeAmount: '10000',
    feeTxHash: FEE_TX,
    feeCollectedAt: FEE_AT,
    settlementTxHash: SETTLE_TX,
    settledAt: SETTLED_AT,
    merchantPaid: true,
    metadata: { order: 'A-17' },
    createdAt: CREATED,
    updatedAt: UPDATED,
    ...fields,
  });
}

/** Waiting to collect the fee: nothing on chain yet. */
const pendingRow = () =>
  settledRow({ state: 'collect_fee', feeTxHash: null, feeCollectedAt: null, settlementTxHash: null, settledAt: null, merchantPaid: false, metadata: null });

describe('settlement presenters', () => {
  it('Form A result: amounts, both hashes and both timestamps', () => {
    expect(formASettlementResult(settledRow())).toStrictEqual({
      success: true,
      transaction: null,
      message: 'Payment settled',
      details: {
        settlement_id: 'stl_01',
        verification_id: 'ver_01',
        settled_amount: '1000000',
        merchant_received: 1000000,
        fee_amount_wei: 10000,
        fee_collection_status: 'collected',
        fee_tx_hash: FEE_TX,
        settlement_tx_hash: SETTLE_TX,
        fee_collected_first: true,
        pricing_model: 'flat_rate',
        description:
          "A flat fee of 10000 token units was collected from the merchant (transferFrom against the merchant's allowance to the treasury) before the payer's transfer was executed; the payer paid exactly the price.",
        fee_collection_timestamp: '2024-05-01T10:00:04.000Z',
        settlement_timestamp: '2024-05-01T10:00:08.000Z',
      },
    });
  });

  it('Form A result with timestamps not set yet answers null for them', () => {
    const { details } = formASettlementResult(settledRow({ feeCollectedAt: null, settledAt: null }));
    expect([details.fee_collection_timestamp, details.settlement_timestamp]).toEqual([null, null]);
  });

  it('Form A result of a payment another transaction executed (no fee of ours): paid, and says no fee was collected', () => {
    const row = settledRow({ feeTxHash: null, feeCollectedAt: null, settlementTxHash: SETTLE_TX });
    const answer = formASettlementResult(row);
    expect(answer.success).toBe(true);
    expect(answer.details).toMatchObject({ fee_collection_status: 'not_collected', fee_tx_hash: null, settlement_tx_hash: SETTLE_TX, fee_collected_first: false, fee_amount_wei: 0 });
    expect(answer.details.description).not.toMatch(/nothing was charged/i);
    expect(settlementStatusRecord(row).details.fee_collection_status).toBe('not_collected');
  });

  it('Form A pending answer points at the status record', () => {
    expect(formASettlementPending(pendingRow())).toStrictEqual({
      success: false,
      transaction: null,
      message: 'settlement in progress; poll GET /v1/settlements/stl_01',
      details: { settlement_id: 'stl_01', verification_id: 'ver_01', status: 'pending', state: 'collect_fee', waiting_reason: null },
    });
  });

  it('Form B create answer: the hash only once settled', () => {
    expect(formBSettlementCreated(settledRow())).toStrictEqual({
      settlement_id: 'stl_01',
      verification_id: 'ver_01',
      status: 'settled',
      transaction_hash: SETTLE_TX,
      destination_address: MERCHANT,
      created_at: '2024-05-01T10:00:00.000Z',
    });
    // a transaction sent but not final is not reported as the settlement's
    const executing = formBSettlementCreated(settledRow({ state: 'executing', settledAt: null }));
    expect([executing.status, executing.transaction_hash]).toEqual(['pending', null]);
  });

  it('status record of a settled settlement: no error', () => {
    expect(settlementStatusRecord(settledRow())).toStrictEqual({
      id: 'stl_01',
      type: 'settlement',
      status: 'settled',
      state: 'settled',
      created_at: '2024-05-01T10:00:00.000Z',
      updated_at: '2024-05-01T10:00:09.000Z',
      transaction_hash: SETTLE_TX,
      settled_at: '2024-05-01T10:00:08.000Z',
      details: {
        verification_id: 'ver_01',
        destination_address: MERCHANT,
        settled_amount: '1000000',
        payer_address: PAYER,
        amount: '1000000',
        fee_amount: '10000',
        fee_collection_status: 'collected',
        fee_tx_hash: FEE_TX,
        settlement_tx_hash: SETTLE_TX,
        fee_collection_timestamp: '2024-05-01T10:00:04.000Z',
        metadata: { order: 'A-17' },
      },
      finality: { status: 'watching', reorgs: 0 },
      waiting: null,
    });
  });

  it('status record of a pending settlement: nothing settled, fee pending, metadata {}', () => {
    const record = settlementStatusRecord(pendingRow());
    expect(record).toMatchObject({ status: 'pending', state: 'collect_fee', transaction_hash: null, settled_at: null });
    expect(record.details).toMatchObject({
      settled_amount: '0',
      fee_collection_status: 'pending',
      fee_tx_hash: null,
      settlement_tx_hash: null,
      fee_collection_timestamp: null,
      metadata: {},
    });
    expect(record).not.toHaveProperty('error');
    expect(record.waiting).toBeNull();
    expect(record.finality).toBeNull();
  });

  it('status record of a settled settlement after a reorg: the finality and how many reorgs', () => {
    expect(settlementStatusRecord(settledRow({ finality: 'final', reorgCount: 1 })).finality).toEqual({ status: 'final', reorgs: 1 });
    expect(settlementStatusRecord(settledRow({ finality: 'changed', reorgCount: 1 })).finality).toEqual({ status: 'changed', reorgs: 1 });
  });

  it('status record of a settlement waiting for the chain: why, since when, and the figures', () => {
    const since = new Date('2024-05-01T10:00:05.000Z');
    const detail = { base_fee_per_gas: '150000000000', max_fee_per_gas_cap: '100000000000' };
    const row = { ...pendingRow(), waitingReason: 'gas_price_above_cap', waitingSince: since, waitingDetail: detail };
    expect(settlementStatusRecord(row)).toMatchObject({
      status: 'pending',
      state: 'collect_fee',
      waiting: { reason: 'gas_price_above_cap', since: '2024-05-01T10:00:05.000Z', details: detail },
    });
    expect(formASettlementPending(row).details).toMatchObject({ status: 'pending', state: 'collect_fee', waiting_reason: 'gas_price_above_cap' });
  });

  it('status record of a failed settlement whose fee could not be collected', () => {
    const record = settlementStatusRecord(
      settledRow({
        state: 'failed',
        feeTxHash: null,
        feeCollectedAt: null,
        settlementTxHash: null,
        settledAt: null,
        merchantPaid: false,
        errorCode: 'fee_collection_failed',
        errorMessage: 'fee collection failed',
        errorDetails: { reason: 'transfer amount exceeds balance' },
      }),
    );
    expect(record).toMatchObject({ status: 'failed', state: 'failed', transaction_hash: null });
    expect(record.details).toMatchObject({ settled_amount: '0', fee_collection_status: 'failed' });
    expect(record.error).toStrictEqual({ code: 'fee_collection_failed', message: 'fee collection failed', details: { reason: 'transfer amount exceeds balance' } });
  });

  it('a failed settlement that took its fee reports it collected; one failed otherwise, not collected; details absent become {}', () => {
    const failedAfterFee = settlementStatusRecord(
      settledRow({ state: 'failed', settlementTxHash: null, settledAt: null, errorCode: 'settlement_failed', errorMessage: 'settlement failed', errorDetails: null }),
    );
    expect(failedAfterFee.details.fee_collection_status).toBe('collected');
    expect(failedAfterFee.error).toStrictEqual({ code: 'settlement_failed', message: 'settlement failed', details: {} });

    const failedBeforeFee = settlementStatusRecord(
      settledRow({ state: 'failed', feeTxHash: null, feeCollectedAt: null, settlementTxHash: null, settledAt: null, errorCode: 'insufficient_allowance', errorMessage: 'insufficient allowance' }),
    );
    expect(failedBeforeFee.details.fee_collection_status).toBe('not_collected');
  });
});

describe('public settlement record (the lookup)', () => {
  it('a settled one: status, hashes, parties, amount, nonce and the reorg outcome, nothing of ours', () => {
    expect(publicSettlementRecord(settledRow({ finality: 'final' }))).toStrictEqual({
      type: 'settlement',
      status: 'settled',
      network: 'eip155:84532',
      transaction_hash: SETTLE_TX,
      settled_at: SETTLED_AT.toISOString(),
      details: {
        destination_address: MERCHANT,
        payer_address: PAYER,
        nonce: '0x' + '0c'.repeat(32),
        amount: '1000000',
        settled_amount: '1000000',
        fee_collection_status: 'collected',
        fee_tx_hash: FEE_TX,
      },
      finality: { status: 'final', reorgs: 0 },
    });
  });

  it('a failed one says its code only: no message, details, ids or metadata', () => {
    const failed = settledRow({
      state: 'failed', feeTxHash: '0x' + 'fe'.repeat(32), feeCollectedAt: null, settlementTxHash: null, settledAt: null, merchantPaid: false,
      errorCode: 'insufficient_allowance', errorMessage: 'allowance 0 below the fee 10000', errorDetails: { available: '0', approval_command: 'cast send …' },
    });
    const record = publicSettlementRecord(failed);
    expect(record).toMatchObject({ status: 'failed', transaction_hash: null, error: { code: 'insufficient_allowance' }, finality: { status: 'watching', reorgs: 0 } });
    // a fee transaction that was sent but not mined is not named
    expect(record.details).toMatchObject({ fee_collection_status: 'not_collected', fee_tx_hash: null, settled_amount: '0' });
    const text = JSON.stringify(record);
    for (const secret of ['stl_01', 'ver_01', 'A-17', 'allowance 0', 'approval_command', 'payment_key', 'collect_fee']) expect(text).not.toContain(secret);
  });

  it('a pending one: pending, no hashes, no finality', () => {
    expect(publicSettlementRecord(pendingRow())).toMatchObject({ status: 'pending', transaction_hash: null, finality: null, details: { fee_tx_hash: null, fee_collection_status: 'pending' } });
    expect(publicSettlementRecord(pendingRow())).not.toHaveProperty('error');
  });
});
