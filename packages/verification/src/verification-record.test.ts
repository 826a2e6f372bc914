import type { Payment } from './payment';
import { NETWORK, payer, MERCHANT, TOKEN } from './testing/fixtures';
import { MAX_STORED_REQUEST_BYTES, verificationRecordOf } from './verification-record';
import { eip3009PaymentOf, exactEip3009 } from '@facilitator/payment-mechanisms';

const payment = (request: unknown): Payment => ({
  protocolVersion: 2,
  mechanism: exactEip3009,
  surface: 'x402',
  network: NETWORK,
  networkName: 'eip155:84532',
  ...eip3009PaymentOf(
    { from: payer.address.toLowerCase(), to: MERCHANT, value: 10_000n, validAfter: 0n, validBefore: 2_000_000_000n, nonce: '0x' + '0c'.repeat(32) },
    '0x' + 'ab'.repeat(65),
    NETWORK,
  ),
  expected: { payTo: MERCHANT, amount: 10_000n, token: TOKEN },
  request,
});

describe('verificationRecordOf', () => {
  it('keeps a verified request up to the limit', () => {
    const request = { paymentRequirements: { description: 'x'.repeat(MAX_STORED_REQUEST_BYTES - 100) } };
    expect(verificationRecordOf(payment(request)).request).toEqual(request);
  });

  it('does not keep a larger one (extra fields a stranger can send up to the body limit), but keeps who, what and how', () => {
    const record = verificationRecordOf(payment({ paymentRequirements: { description: 'x'.repeat(60_000) } }));
    expect(record.request).toEqual({ omitted: expect.stringMatching(/^the request was 600\d\d bytes of JSON; at most 8192 are kept$/) });
    expect(record).toMatchObject({ status: 'verified', payer: payer.address.toLowerCase(), merchant: MERCHANT, amount: '10000', signature: '0x' + 'ab'.repeat(65) });
  });

  it('keeps no request, metadata or signature of a rejected payment', () => {
    const record = verificationRecordOf(payment({ small: true }), { message: 'invalid signature', details: {} });
    expect(record).toMatchObject({ status: 'rejected', request: null, metadata: null, signature: null, failureMessage: 'invalid signature' });
  });
});
