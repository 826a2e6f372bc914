import type { VerificationRow } from '@facilitator/db';
import { verificationRow } from '@facilitator/db/testing';
import { formAVerificationResult, formBVerificationResult, verificationStatusRecord } from './verification';

const CREATED = new Date('2024-05-01T10:00:00.000Z');
const UPDATED = new Date('2024-05-01T10:00:02.500Z');

/** A verified Form B payment; `fields` change it. */
function verifiedRow(fields: Partial<VerificationRow> = {}): VerificationRow {
  return verificationRow({
    id: 'ver_01',
    status: 'verified',
    protocolVersion: 1,
    surface: 'v1',
    chainId: 84532,
    networkName: 'base-sepolia',
    tokenAddress: '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
    payer: '0x' + '11'.repeat(20),
    merchant: '0x' + 'aa'.repeat(20),
    amount: '1000000',
    expectedAmount: '1000000',
    nonce: '0x' + '0c'.repeat(32),
    validAfter: '0',
    validBefore: '1700003600',
    signature: '0x' + '5a'.repeat(65),
    authorizationFingerprint: 'ab'.repeat(32),
    request: { chain: 'base-sepolia' },
    metadata: { order: 'A-17' },
    verifyMs: 12,
    createdAt: CREATED,
    updatedAt: UPDATED,
    ...fields,
  });
}

describe('verification presenters', () => {
  it('Form A result', () => {
    expect(formAVerificationResult(verifiedRow())).toStrictEqual({
      isValid: true,
      message: 'Payment verified',
      details: {
        verification_id: 'ver_01',
        verified_amount: '1000000',
        verified_token: '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
        merchant_address: '0x' + 'aa'.repeat(20),
        payer_address: '0x' + '11'.repeat(20),
        verified_at: '2024-05-01T10:00:00.000Z',
      },
    });
  });

  it('Form B result: the nonce is the transaction_hash, the network as the client named it', () => {
    expect(formBVerificationResult(verifiedRow())).toStrictEqual({
      verification_id: 'ver_01',
      status: 'verified',
      transaction_hash: '0x' + '0c'.repeat(32),
      chain: 'base-sepolia',
      verified_amount: '1000000',
      verified_token: '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
      seller_address: '0x' + 'aa'.repeat(20),
      verified_at: '2024-05-01T10:00:00.000Z',
    });
  });

  it('status record of a verified payment, settled: the settlement’s hash, no failure', () => {
    expect(verificationStatusRecord(verifiedRow(), '0x' + 'f0'.repeat(32))).toStrictEqual({
      id: 'ver_01',
      type: 'verification',
      status: 'verified',
      created_at: '2024-05-01T10:00:00.000Z',
      updated_at: '2024-05-01T10:00:02.500Z',
      transaction_hash: '0x' + 'f0'.repeat(32),
      chain: 'base-sepolia',
      details: {
        seller_address: '0x' + 'aa'.repeat(20),
        expected_amount: '1000000',
        verified_amount: '1000000',
        payer_address: '0x' + '11'.repeat(20),
        token: '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
        nonce: '0x' + '0c'.repeat(32),
        metadata: { order: 'A-17' },
      },
    });
  });

  it('status record before settlement: no hash; metadata absent becomes {}', () => {
    const record = verificationStatusRecord(verifiedRow({ metadata: null }), null);
    expect(record.transaction_hash).toBeNull();
    expect(record.details.metadata).toStrictEqual({});
    expect(record.details).not.toHaveProperty('failure');
  });

  it('status record of a rejection: no verified amount, the failure’s message and details', () => {
    const rejected = verifiedRow({
      status: 'rejected',
      amount: '999',
      signature: null,
      request: null,
      metadata: null,
      failureMessage: 'amount mismatch',
      failureDetails: { authorization_value: '999', expected_amount: '1000000' },
    });
    expect(verificationStatusRecord(rejected, null)).toStrictEqual({
      id: 'ver_01',
      type: 'verification',
      status: 'rejected',
      created_at: '2024-05-01T10:00:00.000Z',
      updated_at: '2024-05-01T10:00:02.500Z',
      transaction_hash: null,
      chain: 'base-sepolia',
      details: {
        seller_address: '0x' + 'aa'.repeat(20),
        expected_amount: '1000000',
        verified_amount: null,
        payer_address: '0x' + '11'.repeat(20),
        token: '0x036cbd53842c5426634e7929541ec2318f3dcf7e',
        nonce: '0x' + '0c'.repeat(32),
        metadata: {},
        failure: { message: 'amount mismatch', details: { authorization_value: '999', expected_amount: '1000000' } },
      },
    });
  });
});
