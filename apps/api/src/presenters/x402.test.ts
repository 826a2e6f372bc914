import type { Settlement } from '@facilitator/db';
import { settlementRow } from '@facilitator/db/testing';
import { x402SettleFailed, x402SettleSucceeded, x402VerifyInvalid, x402VerifyValid } from './x402';

const PAYER = '0x' + '11'.repeat(20);

/** A settled settlement of the x402 surface; `fields` change it. */
function settledRow(fields: Partial<Settlement> = {}): Settlement {
  const at = new Date('2024-05-01T10:00:00.000Z');
  return settlementRow({
    id: 'stl_01',
    verificationId: 'ver_01',
    paymentKey: null,
    surface: 'x402',
    state: 'settled',
    chainId: 84532,
    tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
    payer: PAYER,
    merchant: '0x' + 'aa'.repeat(20),
    amount: '1000000',
    nonce: '0x' + '0c'.repeat(32),
    authorizationFingerprint: 'ab'.repeat(32),
    feeAmount: '10000',
    feeTxHash: '0x' + 'fe'.repeat(32),
    feeCollectedAt: at,
    settlementTxHash: '0x' + 'f0'.repeat(32),
    settledAt: at,
    merchantPaid: true,
    createdAt: at,
    updatedAt: at,
    ...fields,
  });
}

describe('x402 presenters', () => {
  it('valid verify answer', () => {
    expect(x402VerifyValid(PAYER)).toStrictEqual({ isValid: true, payer: PAYER });
  });

  it('invalid verify answer, with the payer when known and without the key when not', () => {
    expect(x402VerifyInvalid('invalid_exact_evm_payload_signature', 'invalid signature', PAYER)).toStrictEqual({
      isValid: false,
      invalidReason: 'invalid_exact_evm_payload_signature',
      invalidMessage: 'invalid signature',
      payer: PAYER,
    });
    const anonymous = x402VerifyInvalid('invalid_payload', 'the request body must be a JSON object');
    expect(anonymous).toStrictEqual({ isValid: false, invalidReason: 'invalid_payload', invalidMessage: 'the request body must be a JSON object' });
    expect(anonymous).not.toHaveProperty('payer');
  });

  it('settle success: the settlement transaction (or "" when there is none), and who was paid how much', () => {
    expect(x402SettleSucceeded(settledRow(), PAYER, 'eip155:84532')).toStrictEqual({
      success: true,
      payer: PAYER,
      transaction: '0x' + 'f0'.repeat(32),
      network: 'eip155:84532',
      amount: '1000000',
      extra: { payTo: '0x' + 'aa'.repeat(20) },
    });
    expect(x402SettleSucceeded(settledRow({ settlementTxHash: null }), PAYER, 'base-sepolia').transaction).toBe('');
    // x402 v1's answer has no amount nor extra
    expect(x402SettleSucceeded(settledRow(), PAYER, 'base-sepolia', 1)).toStrictEqual({ success: true, payer: PAYER, transaction: '0x' + 'f0'.repeat(32), network: 'base-sepolia' });
  });

  it('settle failure: transaction and network default to "", payer only when known', () => {
    expect(x402SettleFailed('insufficient_fee_allowance', 'allowance 0, fee 10000', PAYER, 'eip155:84532', '0x' + 'f1'.repeat(32))).toStrictEqual({
      success: false,
      errorReason: 'insufficient_fee_allowance',
      errorMessage: 'allowance 0, fee 10000',
      transaction: '0x' + 'f1'.repeat(32),
      network: 'eip155:84532',
      payer: PAYER,
    });
    const unknown = x402SettleFailed('invalid_payload', 'bad body', undefined, undefined);
    expect(unknown).toStrictEqual({ success: false, errorReason: 'invalid_payload', errorMessage: 'bad body', transaction: '', network: '' });
    expect(unknown).not.toHaveProperty('payer');
  });
});
